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
// DIEs through .debug_str_offsets (DW_FORM_strx*, clang's DWARF 5) are always candidates.
//
// A 4-byte offset also turns up by chance among a unit's other values (a small .debug_str
// offset looks like a DW_FORM_ref4 in every large unit), so a unit hit that way is read
// once more, DIE by DIE with its abbreviations (no libdw, no strings), for a name or
// linkage-name attribute that really holds one of the offsets.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

class unit_filter {
public:
    explicit unit_filter(Dwarf* dwarf);

    /// False when the file's layout makes the filter unsound (see above).
    bool usable() const { return usable_; }
    /// The DIE offsets of the compile-unit DIEs that may hold a DIE named `leaf` or
    /// `leaf<...>`, in file order. Requires usable().
    std::vector<Dwarf_Off> candidates(std::string_view leaf) const;

private:
    struct unit {
        std::size_t begin;       ///< offset of the unit header in .debug_info
        std::size_t end;         ///< one past its last byte
        Dwarf_Off die_offset;    ///< its unit DIE
        bool always = false;     ///< names through .debug_str_offsets: always a candidate
        std::size_t abbrev_offset = 0;
        unsigned address_size = 8;
        unsigned version = 5;
    };
    /// Whether a DW_AT_name / DW_AT_linkage_name of `u` is a string offset in `offsets`
    /// (sorted); true also when the unit cannot be read this way (a form not known here).
    bool names_offset(const unit& u, const std::vector<std::uint32_t>& offsets) const;
    std::vector<unit> units_;
    const unsigned char* info_ = nullptr;   ///< .debug_info as libdw holds it
    std::size_t info_size_ = 0;
    struct region {
        const char* data;
        std::size_t size;
    };
    std::vector<region> strings_;   ///< .debug_str, .debug_line_str
    region abbrev_{nullptr, 0};     ///< .debug_abbrev
    bool usable_ = false;
};

}  // namespace ompdbg::dwarf::internal
