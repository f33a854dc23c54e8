#pragma once
// A cheap, sound negative test for name lookups: every DW_AT_name and DW_AT_linkage_name of
// a file is a string stored in its string sections (.debug_str, .debug_line_str, the
// supplementary file's .debug_str) or inline in its unit sections (.debug_info,
// .debug_types). When the searched name occurs in none of them, no DIE can carry it and
// the file's DWARF need not be indexed at all (gdb gets the same answer from its index;
// libc's separate debug info takes ~1 s to index in a Debug build and is searched by every
// `break`).

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

class name_filter {
public:
    /// Collects the string data of `dwarf` (and of its supplementary file). When a section
    /// cannot be read as plain bytes (still compressed, split units), the filter answers
    /// "maybe" for every name.
    explicit name_filter(Dwarf* dwarf);

    /// False only when no DIE of the file can be named `leaf` or `leaf<...>` (a template
    /// instance). `leaf` is a DIE's own name, not a qualified one (see leaf_of).
    bool may_contain(std::string_view leaf) const;

    /// Disables the filter (e.g. the file has skeleton units whose names live in .dwo files).
    void disable() { usable_ = false; }

private:
    struct region {
        const char* data;
        std::size_t size;
    };
    std::vector<region> regions_;
    bool usable_ = true;
};

/// Calls `hit(pos)` for every position of `leaf` in [data, data + size) that a DIE's name
/// can start at: followed by '\0', or by '<' (a template instance). `hit` returns where the
/// search goes on (pos + 1 for every hit, `size` to stop).
template <typename Hit>
void for_each_name_at(const char* data, std::size_t size, std::string_view leaf, Hit&& hit) {
    std::size_t p = 0;
    while (p < size && size - p > leaf.size()) {
        const void* found = memmem(data + p, size - p, leaf.data(), leaf.size());
        if (found == nullptr) {
            return;
        }
        const std::size_t h = static_cast<std::size_t>(static_cast<const char*>(found) - data);
        const std::size_t after = h + leaf.size();
        p = after < size && (data[after] == '\0' || data[after] == '<') ? hit(h) : h + 1;
    }
}

/// The last "::"-separated component of a qualified name, ignoring "::" inside template
/// argument or parameter lists: "ns::vec<a::b>::push" → "push". Empty when the name is not
/// one a DIE can carry as its own name in a way the filter understands (operators, names
/// with spaces such as "unsigned int"): callers then skip the filter.
std::string leaf_of(std::string_view qualified);

/// What debug_info::find_functions looks up for `name` as a user wrote it: without blanks
/// around it and a leading "::", and its parameter list ("f(int)") apart, unless it is an
/// operator.
struct function_query {
    std::string name;
    std::optional<std::string> params;
};
function_query parse_function_query(std::string_view name);

}  // namespace ompdbg::dwarf::internal
