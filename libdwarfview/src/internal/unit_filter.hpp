#pragma once
// The compile units that may hold a DIE named `leaf`, found without reading any DIE: a
// DW_AT_name or DW_AT_linkage_name is a .debug_str / .debug_line_str offset (DW_FORM_strp,
// DW_FORM_line_strp) or the string itself (DW_FORM_string) inside its unit's bytes. So the
// units whose bytes contain neither the 4-byte offset of a string spelling the name nor
// the name itself cannot name anything `leaf`. `break main` in a program of 60 MB of DWARF
// then indexes the unit of main instead of the whole file (gdb reads .gdb_index for that).
//
// Sound only when every unit names its DIEs itself: a file whose units refer to DIEs of
// other units (DW_FORM_ref_addr, dwz's supplementary files), partial or type units, or
// 64-bit DWARF makes the filter unusable (callers index the whole file). Units that name
// DIEs through .debug_str_offsets (DW_FORM_strx*, clang's DWARF 5) are candidates when their
// contribution to that section holds one of the offsets (always when it cannot be read).
//
// A 4-byte offset also turns up by chance among a unit's other values (a small .debug_str
// offset looks like a DW_FORM_ref4 in every large unit), and a short name inline in a unit
// ("f\0") among its bytes, so a unit hit that way is read once more, DIE by DIE with its
// abbreviations (no libdw), for a subprogram whose name or linkage-name attribute really
// spells the name. Only subprograms count: every function and inlined instance the index
// records takes its name from a DW_TAG_subprogram of its own unit (itself, its
// specification or its abstract origin), while libc names thousands of parameters `f`.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <string_view>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

class unit_filter {
public:
    explicit unit_filter(Dwarf* dwarf);

    /// False when the file's layout makes the filter unsound (see above).
    bool usable() const { return usable_; }
    /// The DIE offsets of the compile-unit DIEs that may hold a subprogram named `leaf` or
    /// `leaf<...>` (by name or linkage name), in file order. Requires usable().
    std::vector<Dwarf_Off> candidates(std::string_view leaf) const;

    /// The units the filter knows, in file order (requires usable()).
    std::size_t unit_count() const { return units_.size(); }
    /// The DIE offset of unit `index`'s compile-unit DIE.
    Dwarf_Off unit_die(std::size_t index) const { return units_[index].die_offset; }
    /// Where a subprogram's name is spelled: `where` is (1 << 32 | offset) for a string of
    /// .debug_str, (2 << 32 | offset) for one of .debug_line_str (the same string for
    /// every attribute naming it), 0 for a string inline in the unit, `text`.
    struct spelling {
        std::uint64_t where;
        std::string_view text;   ///< only when where == 0
    };
    /// Appends to `out` the name and linkage name of every DW_TAG_subprogram of unit
    /// `index`: what candidates() tests a unit for, read whole for the index cache. False
    /// when the unit cannot be read this way (a form not known here, an offset outside its
    /// section): such a unit may name anything.
    bool subprogram_names(std::size_t index, std::vector<spelling>& out) const;
    /// The string a spelling's `where` names (a view into the file's sections, valid while
    /// its Dwarf lives); nullopt when it runs past its section.
    std::optional<std::string_view> string_at(std::uint64_t where) const;

    /// One abbreviation: its tag and its attributes' names and forms (implicit constants
    /// have no bytes), [first, first + count) of the filter's attribute pool: one
    /// allocation for all of them (libc's 2,063 units have as many tables).
    struct abbrev_entry {
        std::uint64_t tag = 0;
        bool children = false;
        std::uint32_t first = 0;
        std::uint32_t count = 0;
    };
    using attr_form = std::pair<std::uint32_t, std::uint32_t>;

private:
    struct unit {
        std::size_t begin;       ///< offset of the unit header in .debug_info
        std::size_t end;         ///< one past its last byte
        Dwarf_Off die_offset;    ///< its unit DIE
        bool always = false;     ///< names through .debug_str_offsets: always a candidate
        std::size_t abbrev_table = 0;   ///< index in abbrev_tables_
        unsigned address_size = 8;
        unsigned version = 5;
        /// Its DW_AT_str_offsets_base, when it names DIEs through .debug_str_offsets.
        std::size_t str_offsets_base = 0;
        bool has_str_offsets_base = false;
    };
    /// The offsets of the strings spelling a name, sorted, per string section: an offset
    /// into one section says nothing about the other (a path in .debug_line_str ending in
    /// "h" is not a function h in .debug_str).
    struct name_offsets {
        std::vector<std::uint32_t> str;        ///< in .debug_str
        std::vector<std::uint32_t> line_str;   ///< in .debug_line_str
        std::vector<std::uint32_t> any;        ///< both, for the scan of a unit's bytes
    };
    /// A subprogram's name as an attribute holds it: an offset into .debug_str or
    /// .debug_line_str, or the string itself (DW_FORM_string).
    struct name_ref {
        enum class where { str, line_str, inline_text } in;
        std::uint32_t offset;
        std::string_view text;
    };
    enum class walk_end { stopped, done, unreadable };
    template <typename On>
    walk_end walk_subprogram_names(const unit& u, On&& on) const;
    /// Whether a DW_TAG_subprogram of `u` has a DW_AT_name / DW_AT_linkage_name that is one
    /// of `offsets` in its form's section or the inline string `leaf` / `leaf<...>`; true
    /// also when the unit cannot be read this way (a form not known here).
    bool names_function(const unit& u, const name_offsets& offsets, std::string_view leaf) const;
    /// Whether the .debug_str_offsets contribution of `u` holds one of `offsets` (of
    /// .debug_str); true when it cannot be read.
    bool str_offsets_hold(const unit& u, const std::vector<std::uint32_t>& offsets) const;
    std::vector<unit> units_;
    /// The abbreviation tables the units use, read once each (units often share one).
    std::vector<std::vector<abbrev_entry>> abbrev_tables_;
    std::vector<attr_form> attr_pool_;   ///< the attributes of every abbreviation
    const unsigned char* info_ = nullptr;   ///< .debug_info as libdw holds it
    std::size_t info_size_ = 0;
    struct region {
        const char* data;
        std::size_t size;
    };
    region str_{nullptr, 0};        ///< .debug_str (empty: none)
    region line_str_{nullptr, 0};   ///< .debug_line_str (empty: none)
    region str_offsets_{nullptr, 0};   ///< .debug_str_offsets (empty: not readable)
    bool usable_ = false;
};

}  // namespace ompdbg::dwarf::internal
