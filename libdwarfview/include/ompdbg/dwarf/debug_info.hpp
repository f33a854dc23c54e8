#pragma once
/// The DWARF of one ELF file (all CUs), indexed lazily: functions (with inlined copies),
/// line tables, variables in scope, globals and named types. File addresses throughout.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfutils/libdw.h>

#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::dwarf {

class elf_file;

using addr_range = std::pair<std::uint64_t, std::uint64_t>;  ///< [low, high)

/// One concrete instance of a function: an out-of-line definition or one inlined copy.
struct function {
    std::string name;            ///< qualified, as gdb shows it: "ns::klass::method", "main"
    std::string linkage_name;    ///< mangled name when there is one
    std::vector<addr_range> ranges;
    std::uint64_t entry_pc = 0;
    /// Where `break NAME` stops: after the prologue (address of the second line-table row
    /// of the function, or the prologue_end row); entry_pc for inlined copies.
    std::uint64_t breakpoint_pc = 0;
    bool is_inlined = false;
    std::string decl_file;
    int decl_line = 0;
    std::string call_file;       ///< inlined copies: where the call was
    int call_line = 0;
    Dwarf_Die die{};             ///< DW_TAG_subprogram or DW_TAG_inlined_subroutine
    /// The subprogram DIE holding DW_AT_frame_base (for inlined copies: the containing one).
    Dwarf_Die frame_base_die{};

    bool contains(std::uint64_t addr) const {
        for (auto& [lo, hi] : ranges) {
            if (addr >= lo && addr < hi) return true;
        }
        return false;
    }
    std::uint64_t low_pc() const { return ranges.empty() ? entry_pc : ranges.front().first; }
};

struct line_entry {
    std::uint64_t addr = 0;
    std::string file;            ///< full path as recorded (comp_dir applied)
    int line = 0;
    int column = 0;
    bool is_stmt = true;
    bool end_sequence = false;
    bool prologue_end = false;
};

/// A variable or parameter as the debugger sees it; `die` holds DW_AT_location.
struct variable {
    std::string name;
    type var_type;
    Dwarf_Die die{};
    bool is_parameter = false;
    bool is_external = false;    ///< globals: DW_AT_external
    std::string decl_file;
    int decl_line = 0;
    /// The function (for locals/params) whose frame base the location uses.
    std::optional<Dwarf_Die> frame_base_die;
};

/// One entry of gdb's `info functions`, `info variables` or `info types` listing: data
/// only, the front end spells the declaration.
struct listed_symbol {
    std::string name;            ///< qualified ("ns::klass::f", "global_counter", "point"); base types normalised ("unsigned long")
    std::string linkage_name;    ///< functions and variables: the mangled name, if any
    Dwarf_Die die{};             ///< DW_TAG_subprogram, DW_TAG_variable or the type's DIE
    int tag = 0;                 ///< the DIE's tag
    std::string file;            ///< declaration file (a full path, as line entries carry it); the unit's own file when none
    int line = 0;                ///< declaration line; 0 when none (base types)
    bool is_external = false;    ///< DW_AT_external: gdb lists the others as `static` after the global ones
};

enum class symbol_listing { functions, variables, types };

class debug_info {
public:
    /// Called by elf_file; `dwarf` is owned by the elf_file.
    debug_info(const elf_file& owner, Dwarf* dwarf);
    ~debug_info();
    debug_info(const debug_info&) = delete;
    debug_info& operator=(const debug_info&) = delete;

    /// Every concrete instance named `name`: matches the plain name ("foo"), the qualified
    /// name ("ns::klass::foo") and the qualified name with parameters ("foo(int)").
    std::vector<function> find_functions(std::string_view name) const;
    /// Innermost first: inlined subroutines containing `addr`, then the subprogram.
    std::vector<function> function_chain_at(std::uint64_t addr) const;

    /// The line-table row covering `addr` (the last row <= addr in its sequence).
    std::optional<line_entry> line_at(std::uint64_t addr) const;
    /// [start, end) of the contiguous rows around `addr` that belong to the same line,
    /// for `next`/`step`.
    std::optional<addr_range> line_range_at(std::uint64_t addr) const;
    /// The lowest-address statement row of `line` of source `file` (a full path, as line
    /// entries carry it) in the compile unit covering `cu_addr`: where gdb's `info line`
    /// says a line starts. nullopt when that unit has no such row.
    std::optional<line_entry> first_row_of_line(std::uint64_t cu_addr, std::string_view file, int line) const;
    /// Breakpoint addresses for FILE:LINE (file: basename or path suffix). A line without
    /// code moves to the next line that has code, as gdb does; one address per function
    /// instance (e.g. each inlined copy). Returns the line actually used.
    std::pair<std::vector<std::uint64_t>, int> addresses_for_line(std::string_view file, int line) const;
    /// All rows of the sequence covering `addr`, sorted by address (for until/step logic).
    std::vector<line_entry> line_rows_of_function(const function& fn) const;

    /// Locals and parameters in scope at `addr`, innermost block first; parameters of the
    /// innermost function instance included (is_parameter). A variable shadowed by an inner
    /// block's appears too, after it (gdb's `info locals`): the first of a name is the one
    /// the name means. A local and a parameter of the same name in one scope (clang's
    /// outlined routines) both appear.
    std::vector<variable> variables_at(std::uint64_t addr) const;
    /// Globals, file statics (a `preferred_cu_addr` picks the static of that CU first),
    /// `__thread` variables and C++ class statics / namespace variables ("ns::v").
    std::optional<variable> find_global(std::string_view name,
                                        std::optional<std::uint64_t> preferred_cu_addr = {}) const;
    /// Named types: "int", "unsigned long", "struct foo", "foo" (struct/class/typedef),
    /// "enum e", "ns::klass".
    std::optional<type> find_type(std::string_view name) const;

    /// Source files of all line tables; resolve_source_path finds a file on disk.
    std::vector<std::string> source_files() const;
    /// The name gdb shows for source file `path` (a full path, as line entries carry it):
    /// the compilation unit's DW_AT_name as written when that is relative ("prog.c" for
    /// `gcc -g prog.c`, "../src/a.c"), else `path` itself.
    std::string display_name(const std::string& path) const;
    /// The out-of-line functions, the variables with static storage at file or namespace
    /// scope, or the named types defined at file, namespace or class scope, in DIE order
    /// (duplicates across units kept). Builds the lazy name index once; linear in it.
    /// Malformed DWARF gives fewer entries, never an exception.
    std::vector<listed_symbol> list_symbols(symbol_listing kind) const;
    /// Source files as gdb's `info sources` names them: per compilation unit its own file,
    /// then the files of its line table in order; each once, in first-seen order.
    std::vector<std::string> source_files_in_order() const;
    /// gdb's find_line_pc for `info line FILE:LINE`: the lowest-address statement row of
    /// line `line` of a source matching `file` (basename or path suffix) among the rows
    /// gdb keeps, else that of the smallest following line with one. nullopt when the
    /// file has no such line (or no rows).
    std::optional<line_entry> line_start(std::string_view file, int line) const;
    /// gdb's find_pc_sect_line over the rows gdb keeps: the row holding `addr` (the last
    /// one at or below it, a statement row among those at its address) and where the next
    /// row at a higher address starts (its `end`). nullopt outside every sequence.
    struct line_span {
        line_entry row;
        std::uint64_t end = 0;
    };
    std::optional<line_span> gdb_line_span(std::uint64_t addr) const;
    /// The row at exactly `addr` of line `line` of a source matching `file` (a basename or
    /// a path suffix, as addresses_for_line takes it): which file a FILE:LINE location at
    /// `addr` names, when an inlined function of another file starts at the same address.
    std::optional<line_entry> row_of_line_at(std::uint64_t addr, std::string_view file, int line) const;
    /// Names of every function and global for tab completion.
    std::vector<std::string> all_function_names() const;

    Dwarf* raw() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::dwarf
