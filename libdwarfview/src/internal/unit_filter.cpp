#include "internal/unit_filter.hpp"

#include "internal/leb128.hpp"
#include "internal/name_filter.hpp"

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <dwarf.h>
#include <gelf.h>

namespace ompdbg::dwarf::internal {

namespace {

// Beyond this many strings spelling the name every unit is a candidate (the scan below
// stays fast for any number: a 64K-bit filter on the low half of each value comes first).
constexpr std::size_t max_offsets = 1 << 14;

// GNU extensions to the forms, not in every dwarf.h.
constexpr unsigned form_gnu_addr_index = 0x1f01;
constexpr unsigned form_gnu_str_index = 0x1f02;
constexpr unsigned form_gnu_ref_alt = 0x1f20;
constexpr unsigned form_gnu_strp_alt = 0x1f21;

enum class form_use { plain, through_offsets, foreign };

form_use classify(unsigned form) {
    switch (form) {
    case DW_FORM_ref_addr: case DW_FORM_ref_sup4: case DW_FORM_ref_sup8: case DW_FORM_ref_sig8:
    case form_gnu_ref_alt:
        return form_use::foreign;   // DIEs of other units: names may come from there
    case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3:
    case DW_FORM_strx4: case form_gnu_str_index: case DW_FORM_strp_sup: case form_gnu_strp_alt:
    case DW_FORM_indirect: case form_gnu_addr_index:
        return form_use::through_offsets;
    default:
        return form_use::plain;
    }
}

struct section_data {
    const char* data = nullptr;
    std::size_t size = 0;
    bool found = false;
    bool readable = true;
};

section_data find_section(Elf* elf, std::string_view want) {
    section_data out;
    std::size_t shstrndx = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        out.readable = false;
        return out;
    }
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) {
            continue;
        }
        const char* n = elf_strptr(elf, shstrndx, shdr.sh_name);
        std::string_view name = n ? n : "";
        if (name == "." + std::string("z") + std::string(want.substr(1))) {
            out.found = true;
            out.readable = false;   // .zdebug_*: libdw keeps its own decompressed copy
            return out;
        }
        if (name != want) {
            continue;
        }
        out.found = true;
        if (shdr.sh_type == SHT_NOBITS || (shdr.sh_flags & SHF_COMPRESSED) != 0) {
            out.readable = false;
            return out;
        }
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (d == nullptr || (d->d_buf == nullptr && d->d_size != 0)) {
            out.readable = false;
            return out;
        }
        out.data = static_cast<const char*>(d->d_buf);
        out.size = d->d_size;
        return out;
    }
    return out;
}

using abbrev_entry = unit_filter::abbrev_entry;

/// The abbreviation table at `offset`, by code; nullopt when it cannot be read.
std::optional<std::vector<abbrev_entry>> read_abbrevs(const unsigned char* p, const unsigned char* end,
                                                      std::vector<unit_filter::attr_form>& pool) {
    std::vector<abbrev_entry> table;
    for (;;) {
        std::uint64_t code = 0, tag = 0;
        if (!read_uleb(p, end, code)) {
            return std::nullopt;
        }
        if (code == 0) {
            return table;
        }
        if (code > (1u << 20) || !read_uleb(p, end, tag) || p >= end) {
            return std::nullopt;
        }
        if (table.size() <= code) {
            table.resize(code + 1);
        }
        abbrev_entry& e = table[code];
        e = abbrev_entry{};   // a code defined twice: the last definition
        e.tag = tag;
        e.children = *p++ != 0;
        for (;;) {
            std::uint64_t name = 0, form = 0;
            if (!read_uleb(p, end, name) || !read_uleb(p, end, form)) {
                return std::nullopt;
            }
            if (name == 0 && form == 0) {
                break;
            }
            if (form == DW_FORM_implicit_const) {
                std::uint64_t ignored = 0;
                if (!read_uleb(p, end, ignored)) {
                    return std::nullopt;
                }
            }
            if (e.count == 0) {
                e.first = static_cast<std::uint32_t>(pool.size());
            }
            pool.emplace_back(static_cast<std::uint32_t>(name), static_cast<std::uint32_t>(form));
            ++e.count;
        }
    }
}

// Whether an abbreviation table names DIEs through string offsets (true), only plainly
// (false), or refers to other units (nullopt).
std::optional<bool> abbrev_forms(const std::vector<abbrev_entry>& table,
                                 const std::vector<unit_filter::attr_form>& pool) {
    bool through = false;
    for (const abbrev_entry& e : table) {
        for (std::uint32_t k = e.first; k < e.first + e.count; ++k) {
            auto [attr, form] = pool[k];
            switch (classify(form)) {
            case form_use::foreign: return std::nullopt;
            case form_use::through_offsets: through = true; break;
            case form_use::plain: break;
            }
        }
    }
    return through;
}

}  // namespace

unit_filter::unit_filter(Dwarf* dwarf) {
    if (dwarf == nullptr) {
        return;
    }
    Elf* elf = dwarf_getelf(dwarf);
    section_data info = find_section(elf, ".debug_info");
    if (!info.found || !info.readable || find_section(elf, ".debug_types").found ||
        find_section(elf, ".gnu_debugaltlink").found || find_section(elf, ".debug_sup").found) {
        return;
    }
    for (auto [name, to] : {std::pair{".debug_str", &str_}, std::pair{".debug_line_str", &line_str_}}) {
        section_data d = find_section(elf, name);
        if (!d.readable) {
            return;
        }
        if (d.found) {
            *to = region{d.data, d.size};
        }
    }
    section_data abbrev = find_section(elf, ".debug_abbrev");
    if (!abbrev.found || !abbrev.readable) {
        return;
    }
    if (section_data so = find_section(elf, ".debug_str_offsets"); so.found && so.readable) {
        str_offsets_ = region{so.data, so.size};
    }
    info_ = reinterpret_cast<const unsigned char*>(info.data);
    info_size_ = info.size;

    std::unordered_map<std::size_t, std::size_t> table_at;   // abbreviation offset -> table
    std::vector<std::optional<bool>> forms_of;               // abbrev_forms of each table
    Dwarf_Off off = 0, next = 0;
    std::size_t header_size = 0;
    Dwarf_Half version = 0;
    Dwarf_Off abbrev_offset = 0;
    std::uint8_t address_size = 0, offset_size = 0;
    while (dwarf_next_unit(dwarf, off, &next, &header_size, &version, &abbrev_offset, &address_size,
                           &offset_size, nullptr, nullptr) == 0) {
        if (offset_size != 4 || next > info_size_ || next <= off) {
            return;   // 64-bit DWARF (8-byte offsets) or a header libdw and we disagree on
        }
        Dwarf_Die cudie;
        if (dwarf_offdie(dwarf, off + header_size, &cudie) == nullptr ||
            dwarf_tag(&cudie) != DW_TAG_compile_unit) {
            return;   // partial, type or skeleton units
        }
        unit u{static_cast<std::size_t>(off), static_cast<std::size_t>(next), off + header_size};
        u.address_size = address_size;
        u.version = version;
        // The forms the unit's abbreviations use (libdw 0.188's dwarf_getabbrevattr
        // miscounts after DW_FORM_implicit_const: the table is read here, once per table).
        auto [known, added] = table_at.emplace(static_cast<std::size_t>(abbrev_offset), abbrev_tables_.size());
        if (added) {
            if (abbrev_offset >= abbrev.size) {
                return;
            }
            const auto* begin = reinterpret_cast<const unsigned char*>(abbrev.data);
            auto table = read_abbrevs(begin + abbrev_offset, begin + abbrev.size, attr_pool_);
            if (!table) {
                return;
            }
            abbrev_tables_.push_back(std::move(*table));
            forms_of.push_back(abbrev_forms(abbrev_tables_.back(), attr_pool_));
        }
        u.abbrev_table = known->second;
        std::optional<bool> through = forms_of[known->second];
        if (!through) {
            return;
        }
        u.always = *through;
        Dwarf_Attribute base_attr;
        Dwarf_Word base = 0;
        if (u.always && dwarf_attr(&cudie, DW_AT_str_offsets_base, &base_attr) != nullptr &&
            dwarf_formudata(&base_attr, &base) == 0) {
            u.str_offsets_base = static_cast<std::size_t>(base);
            u.has_str_offsets_base = true;
        }
        units_.push_back(u);
        off = next;
    }
    usable_ = !units_.empty();
}


bool unit_filter::str_offsets_hold(const unit& u, const std::vector<std::uint32_t>& offsets) const {
    // A DWARF 5 contribution: a header (4-byte length, version, padding) right before the
    // base, then 4-byte offsets.
    if (!u.has_str_offsets_base || u.str_offsets_base < 8 || u.str_offsets_base > str_offsets_.size) {
        return true;
    }
    std::uint32_t length = 0;
    std::memcpy(&length, str_offsets_.data + u.str_offsets_base - 8, 4);
    std::size_t end = u.str_offsets_base - 4 + std::size_t{length};
    if (length < 4 || length >= 0xfffffff0u || end > str_offsets_.size) {
        return true;
    }
    for (std::size_t p = u.str_offsets_base; p + 4 <= end; p += 4) {
        std::uint32_t v;
        std::memcpy(&v, str_offsets_.data + p, 4);
        if (std::binary_search(offsets.begin(), offsets.end(), v)) {
            return true;
        }
    }
    return false;
}

// Reads the DIEs of `u` with its abbreviations (no libdw) and hands every DW_AT_name /
// DW_AT_linkage_name of a DW_TAG_subprogram to `on` (a name_ref; `on` returns true to stop).
// One walk serves both the per-name check (names_function) and the whole table of names
// that the index cache keeps (subprogram_names).
template <typename On>
unit_filter::walk_end unit_filter::walk_subprogram_names(const unit& u, On&& on) const {
    const std::vector<abbrev_entry>* table = &abbrev_tables_[u.abbrev_table];
    const unsigned char* p = info_ + u.die_offset;
    const unsigned char* end = info_ + u.end;
    auto skip = [&](std::size_t n) {
        if (static_cast<std::size_t>(end - p) < n) {
            return false;
        }
        p += n;
        return true;
    };
    auto uleb = [&]() -> std::optional<std::uint64_t> {
        std::uint64_t v = 0;
        return read_uleb(p, end, v) ? std::optional(v) : std::nullopt;
    };
    const std::size_t ref_addr_size = u.version <= 2 ? u.address_size : 4;
    while (p < end) {
        auto code = uleb();
        if (!code) {
            return walk_end::unreadable;
        }
        if (*code == 0) {
            continue;   // the end of a sibling list
        }
        if (*code >= table->size()) {
            return walk_end::unreadable;
        }
        const bool function = (*table)[*code].tag == DW_TAG_subprogram;
        const abbrev_entry& entry = (*table)[*code];
        for (std::uint32_t k = entry.first; k < entry.first + entry.count; ++k) {
            auto [attr, form] = attr_pool_[k];
            for (int indirections = 0; form == DW_FORM_indirect && indirections < 4; ++indirections) {
                auto f = uleb();
                if (!f) {
                    return walk_end::unreadable;
                }
                form = static_cast<std::uint32_t>(*f);
            }
            const bool naming = function && (attr == DW_AT_name || attr == DW_AT_linkage_name ||
                                             attr == DW_AT_MIPS_linkage_name);
            if (naming && (form == form_gnu_str_index || form == DW_FORM_strp_sup || form == form_gnu_strp_alt)) {
                return walk_end::unreadable;   // a string elsewhere: cannot tell
            }
            bool ok = true;
            switch (form) {
            case DW_FORM_strp: case DW_FORM_line_strp: {
                if (static_cast<std::size_t>(end - p) < 4) {
                    return walk_end::unreadable;
                }
                std::uint32_t v;
                std::memcpy(&v, p, 4);
                p += 4;
                if (naming && on(name_ref{form == DW_FORM_strp ? name_ref::where::str : name_ref::where::line_str, v, {}})) {
                    return walk_end::stopped;
                }
                break;
            }
            case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3: case DW_FORM_strx4: {
                std::uint64_t index = 0;
                if (form == DW_FORM_strx) {
                    auto v = uleb();
                    if (!v) {
                        return walk_end::unreadable;
                    }
                    index = *v;
                } else {
                    std::size_t n = form == DW_FORM_strx1 ? 1 : form == DW_FORM_strx2 ? 2 : form == DW_FORM_strx3 ? 3 : 4;
                    if (static_cast<std::size_t>(end - p) < n) {
                        return walk_end::unreadable;
                    }
                    for (std::size_t k = 0; k < n; ++k) {
                        index |= std::uint64_t{p[k]} << (8 * k);   // little-endian
                    }
                    p += n;
                }
                if (naming) {
                    if (!u.has_str_offsets_base || u.str_offsets_base > str_offsets_.size ||
                        index > (str_offsets_.size - u.str_offsets_base) / 4 ||
                        u.str_offsets_base + index * 4 + 4 > str_offsets_.size) {
                        return walk_end::unreadable;   // cannot tell: keep the unit
                    }
                    std::uint32_t v;
                    std::memcpy(&v, str_offsets_.data + u.str_offsets_base + index * 4, 4);
                    if (on(name_ref{name_ref::where::str, v, {}})) {
                        return walk_end::stopped;
                    }
                }
                break;
            }
            case DW_FORM_addr: ok = skip(u.address_size); break;
            case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_addrx1:
                ok = skip(1); break;
            case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_addrx2: ok = skip(2); break;
            case DW_FORM_addrx3: ok = skip(3); break;
            case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_sec_offset:
            case DW_FORM_addrx4: case DW_FORM_ref_sup4: case DW_FORM_strp_sup: case form_gnu_ref_alt:
            case form_gnu_strp_alt:
                ok = skip(4); break;
            case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: ok = skip(8); break;
            case DW_FORM_data16: ok = skip(16); break;
            case DW_FORM_ref_addr: ok = skip(ref_addr_size); break;
            case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_addrx:
            case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_sdata: case form_gnu_addr_index:
            case form_gnu_str_index:
                ok = uleb().has_value(); break;   // an SLEB128 has the same length
            case DW_FORM_string: {
                const void* nul = std::memchr(p, 0, static_cast<std::size_t>(end - p));
                if (nul == nullptr) {
                    return walk_end::unreadable;
                }
                std::string_view text(reinterpret_cast<const char*>(p),
                                      static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - p));
                if (naming && on(name_ref{name_ref::where::inline_text, 0, text})) {
                    return walk_end::stopped;
                }
                ok = skip(text.size() + 1);
                break;
            }
            case DW_FORM_block1:
                ok = p < end && skip(1 + static_cast<std::size_t>(*p)); break;
            case DW_FORM_block2: {
                std::uint16_t n = 0;
                ok = end - p >= 2 && (std::memcpy(&n, p, 2), skip(2 + std::size_t{n}));
                break;
            }
            case DW_FORM_block4: {
                std::uint32_t n = 0;
                ok = end - p >= 4 && (std::memcpy(&n, p, 4), skip(4 + std::size_t{n}));
                break;
            }
            case DW_FORM_block: case DW_FORM_exprloc: {
                auto n = uleb();
                ok = n && skip(*n);
                break;
            }
            case DW_FORM_flag_present: case DW_FORM_implicit_const: break;
            default: return walk_end::unreadable;   // a form not known here: keep the unit
            }
            if (!ok) {
                return walk_end::unreadable;
            }
        }
    }
    return walk_end::done;
}

bool unit_filter::names_function(const unit& u, const name_offsets& offsets,
                                 std::string_view leaf) const {
    return walk_subprogram_names(u, [&](const name_ref& n) {
        switch (n.in) {
        case name_ref::where::str:
            return std::binary_search(offsets.str.begin(), offsets.str.end(), n.offset);
        case name_ref::where::line_str:
            return std::binary_search(offsets.line_str.begin(), offsets.line_str.end(), n.offset);
        case name_ref::where::inline_text:
            return n.text.starts_with(leaf) && (n.text.size() == leaf.size() || n.text[leaf.size()] == '<');
        }
        return true;
    }) != walk_end::done;
}

bool unit_filter::subprogram_names(std::size_t index, std::vector<spelling>& out) const {
    bool readable = true;
    walk_end end = walk_subprogram_names(units_[index], [&](const name_ref& n) {
        if (n.in == name_ref::where::inline_text) {
            out.push_back(spelling{0, n.text});
            return false;
        }
        const bool in_str = n.in == name_ref::where::str;
        if (n.offset >= (in_str ? str_ : line_str_).size) {
            readable = false;   // an offset outside its section: the unit may name anything
            return true;
        }
        out.push_back(spelling{(std::uint64_t{in_str ? 1u : 2u} << 32) | n.offset, {}});
        return false;
    });
    return readable && end == walk_end::done;
}

std::optional<std::string_view> unit_filter::string_at(std::uint64_t where) const {
    const region& r = (where >> 32) == 1 ? str_ : line_str_;
    const std::size_t offset = static_cast<std::uint32_t>(where);
    if ((where >> 32) == 0 || (where >> 32) > 2 || offset >= r.size) {
        return std::nullopt;
    }
    const void* nul = std::memchr(r.data + offset, 0, r.size - offset);
    if (nul == nullptr) {
        return std::nullopt;
    }
    return std::string_view(r.data + offset, static_cast<std::size_t>(static_cast<const char*>(nul) - (r.data + offset)));
}

std::vector<Dwarf_Off> unit_filter::candidates(std::string_view leaf) const {
    std::vector<bool> hit(units_.size(), false);
    auto all = [&] {
        std::vector<Dwarf_Off> out;
        for (const unit& u : units_) {
            out.push_back(u.die_offset);
        }
        return out;
    };
    if (leaf.empty()) {
        return all();
    }
    // 1. Offsets of the strings spelling the name (or name<...>; string tails count: the
    //    linker merges "main" into "domain").
    name_offsets offsets;
    for (auto [r, to] : {std::pair{&str_, &offsets.str}, std::pair{&line_str_, &offsets.line_str}}) {
        for_each_name_at(r->data, r->size, leaf, [&](std::size_t h) {
            to->push_back(static_cast<std::uint32_t>(h));
            return to->size() > max_offsets ? r->size : h + 1;
        });
        if (to->size() > max_offsets) {
            return all();
        }
        std::sort(to->begin(), to->end());   // found in order already; sorted for binary_search
    }
    std::merge(offsets.str.begin(), offsets.str.end(), offsets.line_str.begin(), offsets.line_str.end(),
               std::back_inserter(offsets.any));
    offsets.any.erase(std::unique(offsets.any.begin(), offsets.any.end()), offsets.any.end());

    auto unit_at = [&](std::size_t pos) -> std::size_t {
        auto it = std::upper_bound(units_.begin(), units_.end(), pos,
                                   [](std::size_t p, const unit& u) { return p < u.begin; });
        return it == units_.begin() ? 0 : static_cast<std::size_t>(it - units_.begin()) - 1;
    };
    // names_function looks for every spelling at once: whatever it answers for a unit,
    // the rest of that unit need not be searched.
    std::vector<bool> read(units_.size(), false);   // names_function has answered for the unit
    auto check = [&](std::size_t u) {
        if (!read[u]) {
            read[u] = true;
            hit[u] = names_function(units_[u], offsets, leaf);
        }
        return units_[u].end;
    };
    // 2. The name inline in a unit (DW_FORM_string).
    for_each_name_at(reinterpret_cast<const char*>(info_), info_size_, leaf,
                     [&](std::size_t h) { return check(unit_at(h)); });
    // 3. The 4-byte offsets anywhere in a unit's bytes: memmem per offset while they are
    //    few (it skips ahead), else one pass with a 64K-bit filter on the low half of each
    //    value.
    const char* info = reinterpret_cast<const char*>(info_);
    if (offsets.any.size() <= 16) {
        for (std::uint32_t o : offsets.any) {
            char needle[4];
            std::memcpy(needle, &o, sizeof needle);
            std::size_t p = 0;
            while (p + sizeof needle <= info_size_) {
                const void* found = memmem(info + p, info_size_ - p, needle, sizeof needle);
                if (found == nullptr) {
                    break;
                }
                p = check(unit_at(static_cast<std::size_t>(static_cast<const char*>(found) - info)));
            }
        }
    } else if (info_size_ >= 4 && !offsets.any.empty()) {
        auto filter = std::make_unique<std::bitset<1 << 16>>();
        for (std::uint32_t o : offsets.any) {
            filter->set(o & 0xffff);
        }
        std::size_t u = 0;
        for (std::size_t i = 0; i + 4 <= info_size_;) {
            while (u + 1 < units_.size() && i >= units_[u].end) {
                ++u;
            }
            if (read[u]) {
                i = units_[u].end;
                continue;
            }
            std::uint32_t v;
            std::memcpy(&v, info_ + i, sizeof v);
            if ((*filter)[v & 0xffff] && std::binary_search(offsets.any.begin(), offsets.any.end(), v)) {
                i = check(u);
                continue;
            }
            ++i;
        }
    }
    // 4. Units naming through .debug_str_offsets: their contribution to it.
    for (std::size_t u = 0; u < units_.size(); ++u) {
        if (units_[u].always && !read[u] && str_offsets_hold(units_[u], offsets.str)) {
            check(u);
        }
    }
    std::vector<Dwarf_Off> out;
    for (std::size_t u = 0; u < units_.size(); ++u) {
        if (hit[u]) {
            out.push_back(units_[u].die_offset);
        }
    }
    return out;
}

}  // namespace ompdbg::dwarf::internal
