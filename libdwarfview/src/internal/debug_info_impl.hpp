#pragma once
// The state behind debug_info (its pimpl), shared by the files that implement debug_info's
// members: debug_info.cpp (units, index, functions), line_lookup.cpp (line queries),
// variable_lookup.cpp (variables, globals, types) and symbol_listing.cpp (the listings of
// info functions/variables/types/sources).

#include "ompdbg/dwarf/debug_info.hpp"

#include "internal/dwarf_index.hpp"
#include "internal/index_cache_io.hpp"
#include "internal/line_table.hpp"
#include "internal/name_filter.hpp"
#include "internal/unit_filter.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ompdbg::dwarf {

namespace internal {

struct cu_entry {
    Dwarf_Die die;
    std::vector<addr_range> ranges;
    bool is_gnu = false;
    std::once_flag lines_once;
    std::unique_ptr<line_table> lines;
    std::once_flag loclist_once;
    bool has_loclist = false;
};

inline bool file_matches(std::string_view full, std::string_view query) {
    if (query.empty()) {
        return false;
    }
    if (full == query) {
        return true;
    }
    if (full.size() > query.size() && full.ends_with(query) &&
        full[full.size() - query.size() - 1] == '/') {
        return true;
    }
    return false;
}

}  // namespace internal

using internal::cu_entry;
using internal::dwarf_index;
using internal::line_table;
using internal::name_filter;
using internal::unit_filter;
using internal::unit_names;

struct debug_info::impl {
    const elf_file& owner;
    Dwarf* dwarf;

    std::once_flag cus_once;
    std::vector<std::unique_ptr<cu_entry>> cus;
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::size_t>> cu_ranges;   // sorted
    std::unordered_map<const void*, std::size_t> cu_by_die;

    std::once_flag index_once;
    std::unique_ptr<dwarf_index> index_;
    std::atomic<bool> index_ready{false};

    std::once_flag filter_once;
    std::unique_ptr<name_filter> filter_;

    std::once_flag display_once;
    /// Normalized comp_dir/name of each unit whose DW_AT_name is relative -> that name.
    std::unordered_map<std::string, std::string> display_names;

    // Function lookups before the whole index exists index only the units that may hold
    // the name (see unit_filter): `break main` in a large program reads one unit.
    std::once_flag unit_filter_once;
    std::unique_ptr<unit_filter> unit_filter_;
    // The same answers for every name at once, read from the index cache or built after a
    // miss (index_cache.hpp): a file without the name then costs a binary search.
    std::once_flag names_once;
    std::optional<unit_names> names_;
    std::mutex unit_index_mutex;
    std::unordered_map<Dwarf_Off, std::unique_ptr<dwarf_index>> unit_indexes;
    std::unordered_map<std::string, std::vector<Dwarf_Off>> units_by_leaf;   ///< unit_filter's answers

    // Answers per file address: every thread of a program parked in the same place (a
    // barrier, a condition wait) asks the same questions once per frame, and walking a
    // unit's DIEs for the scope chain is the cost of a backtrace. The answers depend only
    // on the file, never on a process, so they are shared by every process of the file.
    static constexpr std::size_t memo_limit = 1 << 14;
    std::mutex memo_mutex;
    std::unordered_map<std::uint64_t, std::vector<function>> chain_memo;
    std::unordered_map<std::uint64_t, std::vector<variable>> variables_memo;
    template <typename T, typename Compute>
    std::vector<T> memoized(std::unordered_map<std::uint64_t, std::vector<T>>& memo, std::uint64_t addr,
                            Compute&& compute) {
        {
            std::lock_guard lock(memo_mutex);
            if (auto it = memo.find(addr); it != memo.end()) {
                return it->second;
            }
        }
        std::vector<T> out = compute();
        std::lock_guard lock(memo_mutex);
        if (memo.size() >= memo_limit) {
            memo.clear();
        }
        memo.emplace(addr, out);
        return out;
    }

    impl(const elf_file& o, Dwarf* d) : owner(o), dwarf(d) {}

    void load_cus();
    const dwarf_index& index();
    /// False when no DIE can be named `qualified` (see name_filter): the lookup is over
    /// without building the index. Always true once the index exists.
    bool may_name(std::string_view qualified);
    std::string qualified_name(Dwarf_Die die);
    /// The file's unit_filter, made on first use.
    const unit_filter& filter_of_units();
    /// The file's table of function names from the index cache, or built and written to
    /// it after a miss; nullptr when the cache is off, the file has no build-id or its
    /// units cannot be read one by one (see unit_filter::usable).
    const unit_names* names_table();
    /// The indexes that hold every function named `query`: the whole file's, or the
    /// indexes of the units that may name the leaf (names_table or unit_filter).
    std::vector<const dwarf_index*> function_sources(const std::string& query);
    std::optional<std::size_t> cu_for(std::uint64_t addr);
    std::optional<std::size_t> cu_of_die(Dwarf_Die die);
    const line_table& lines(std::size_t cu);
    /// The line table of the CU covering `addr` and the index of the row covering it.
    struct located_row {
        const line_table* table;
        std::size_t index;
    };
    std::optional<located_row> locate_row(std::uint64_t addr);
    bool has_loclist(std::size_t cu);

    std::vector<Dwarf_Die> scope_chain(Dwarf_Die cudie, std::uint64_t addr);
    function make_function(Dwarf_Die die, Dwarf_Die frame_base, const std::string& name);
    std::uint64_t breakpoint_pc(const function& fn);
    std::vector<std::string> parameter_types(Dwarf_Die die);
    std::vector<function> chain_at_uncached(std::uint64_t addr);
    std::vector<variable> variables_at_uncached(std::uint64_t addr);
};


}  // namespace ompdbg::dwarf
