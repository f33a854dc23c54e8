#pragma once
/// Values of the expression language and their formatting, exactly as gdb prints them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::dwarf {

class eval_context;

/// A typed value: its bytes, and where it lives when it is an lvalue.
struct value {
    type val_type;
    std::vector<std::byte> bytes;           ///< val_type.size() bytes (empty if optimized out)
    std::optional<std::uint64_t> address;   ///< lvalue in memory
    std::optional<int> dwarf_register;      ///< lvalue in a register
    std::string register_name;              ///< lvalue in a named register ($rax, $eax)
    bool optimized_out = false;
    /// For bitfield members: bit position/size inside `bytes` (which then holds the
    /// storage unit) so assignment can write back.
    std::optional<std::uint32_t> bit_size;
    std::uint32_t bit_offset = 0;
    /// Types the evaluator synthesises (int literals, pointer arithmetic, &x) have no DIE:
    /// they are described by this name ("int", "long", "double", "T *").
    std::string synthetic_type_name;

    bool is_lvalue() const {
        return address.has_value() || dwarf_register.has_value() || !register_name.empty();
    }
};

/// print/FMT letters: x, d, u, o, t, c, a, f, s, z (zero_hex).
enum class format_letter { natural, hex, decimal, unsigned_, octal, binary, char_, address, float_, string, zero_hex };

/// The format for a gdb letter ('x' → hex ...); nullopt for an unknown letter.
std::optional<format_letter> parse_format_letter(char c);

struct format_options {
    format_letter letter = format_letter::natural;
    std::size_t max_string = 200;     ///< gdb's `set print elements` (SIZE_MAX: unlimited)
    std::size_t max_elements = 200;
    std::size_t repeat_threshold = 10;   ///< gdb's `set print repeats` (SIZE_MAX: unlimited)
    bool pretty = false;              ///< gdb's `set print pretty`: one field per line
    bool top_level = true;            ///< `print` prefixes references etc. only at top level
};

/// Formats `v` as gdb's `print` shows it (without the "$1 = " prefix). Needs the context
/// to read strings behind char pointers and to symbolize code pointers (<main+4>).
/// A lazy lvalue (address set, bytes empty) is read through the context. Throws
/// ompdbg::error ("Cannot access memory at address 0x...") when the value itself cannot
/// be read; unreadable strings behind pointers print as `<error: ...>` like gdb.
std::string format_value(const value& v, eval_context& ctx, const format_options& opts = {});

}  // namespace ompdbg::dwarf
