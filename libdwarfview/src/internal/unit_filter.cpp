#include "internal/unit_filter.hpp"

#include "internal/leb128.hpp"
#include "internal/name_filter.hpp"

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

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

/// One abbreviation: its attributes' names and forms (implicit constants have no bytes).
struct abbrev_entry {
    bool children = false;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> attrs;
};

/// The abbreviation table at `offset`, by code; nullopt when it cannot be read.
std::optional<std::vector<abbrev_entry>> read_abbrevs(const unsigned char* p, const unsigned char* end) {
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
            e.attrs.emplace_back(static_cast<std::uint32_t>(name), static_cast<std::uint32_t>(form));
        }
    }
}

// Whether the abbreviation table at `offset` names DIEs through string offsets (true), only
// plainly (false), or refers to other units or cannot be read (nullopt).
std::optional<bool> abbrev_forms(const section_data& abbrev, std::uint64_t offset) {
    if (offset >= abbrev.size) {
        return std::nullopt;
    }
    const auto* begin = reinterpret_cast<const unsigned char*>(abbrev.data);
    auto table = read_abbrevs(begin + offset, begin + abbrev.size);
    if (!table) {
        return std::nullopt;
    }
    bool through = false;
    for (const abbrev_entry& e : *table) {
        for (auto [attr, form] : e.attrs) {
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
    for (std::string_view s : {".debug_str", ".debug_line_str"}) {
        section_data d = find_section(elf, s);
        if (!d.readable) {
            return;
        }
        if (d.found && d.size > 0) {
            strings_.push_back(region{d.data, d.size});
        }
    }
    section_data abbrev = find_section(elf, ".debug_abbrev");
    if (!abbrev.found || !abbrev.readable) {
        return;
    }
    abbrev_ = region{abbrev.data, abbrev.size};
    info_ = reinterpret_cast<const unsigned char*>(info.data);
    info_size_ = info.size;

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
        u.abbrev_offset = static_cast<std::size_t>(abbrev_offset);
        u.address_size = address_size;
        u.version = version;
        // The forms the unit's abbreviations use (libdw 0.188's dwarf_getabbrevattr
        // miscounts after DW_FORM_implicit_const: the table is read here).
        std::optional<bool> through = abbrev_forms(abbrev, abbrev_offset);
        if (!through) {
            return;
        }
        u.always = *through;
        units_.push_back(u);
        off = next;
    }
    usable_ = !units_.empty();
}


bool unit_filter::names_offset(const unit& u, const std::vector<std::uint32_t>& offsets) const {
    const auto* abbrev_begin = reinterpret_cast<const unsigned char*>(abbrev_.data);
    if (u.abbrev_offset >= abbrev_.size) {
        return true;
    }
    auto table = read_abbrevs(abbrev_begin + u.abbrev_offset, abbrev_begin + abbrev_.size);
    if (!table) {
        return true;
    }
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
            return true;
        }
        if (*code == 0) {
            continue;   // the end of a sibling list
        }
        if (*code >= table->size()) {
            return true;
        }
        for (auto [attr, form] : (*table)[*code].attrs) {
            for (int indirections = 0; form == DW_FORM_indirect && indirections < 4; ++indirections) {
                auto f = uleb();
                if (!f) {
                    return true;
                }
                form = static_cast<std::uint32_t>(*f);
            }
            bool ok = true;
            switch (form) {
            case DW_FORM_strp: case DW_FORM_line_strp: {
                if (static_cast<std::size_t>(end - p) < 4) {
                    return true;
                }
                std::uint32_t v;
                std::memcpy(&v, p, 4);
                p += 4;
                if ((attr == DW_AT_name || attr == DW_AT_linkage_name || attr == DW_AT_MIPS_linkage_name) &&
                    std::binary_search(offsets.begin(), offsets.end(), v)) {
                    return true;
                }
                break;
            }
            case DW_FORM_addr: ok = skip(u.address_size); break;
            case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
                ok = skip(1); break;
            case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2: ok = skip(2); break;
            case DW_FORM_strx3: case DW_FORM_addrx3: ok = skip(3); break;
            case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_sec_offset: case DW_FORM_strx4:
            case DW_FORM_addrx4: case DW_FORM_ref_sup4: case DW_FORM_strp_sup: case form_gnu_ref_alt:
            case form_gnu_strp_alt:
                ok = skip(4); break;
            case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: ok = skip(8); break;
            case DW_FORM_data16: ok = skip(16); break;
            case DW_FORM_ref_addr: ok = skip(ref_addr_size); break;
            case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
            case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_sdata: case form_gnu_addr_index:
            case form_gnu_str_index:
                ok = uleb().has_value(); break;   // an SLEB128 has the same length
            case DW_FORM_string: {
                const void* nul = std::memchr(p, 0, static_cast<std::size_t>(end - p));
                ok = nul != nullptr && skip(static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - p) + 1);
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
            default: return true;   // a form not known here: keep the unit
            }
            if (!ok) {
                return true;
            }
        }
    }
    return false;
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
    std::vector<std::uint32_t> offsets;
    bool too_many = false;
    for (const region& r : strings_) {
        for_each_name_at(r.data, r.size, leaf, [&](std::size_t h) {
            offsets.push_back(static_cast<std::uint32_t>(h));
            too_many = offsets.size() > max_offsets;
            return too_many ? r.size : h + 1;
        });
    }
    if (too_many) {
        return all();
    }
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());

    auto unit_at = [&](std::size_t pos) -> std::size_t {
        auto it = std::upper_bound(units_.begin(), units_.end(), pos,
                                   [](std::size_t p, const unit& u) { return p < u.begin; });
        return it == units_.begin() ? 0 : static_cast<std::size_t>(it - units_.begin()) - 1;
    };
    // 2. The name inline in a unit (DW_FORM_string).
    for_each_name_at(reinterpret_cast<const char*>(info_), info_size_, leaf, [&](std::size_t h) {
        std::size_t u = unit_at(h);
        hit[u] = true;
        return units_[u].end;   // the rest of this unit need not be searched
    });
    // 3. The 4-byte offsets anywhere in a unit's bytes (false hits only cost an index):
    //    memmem per offset while they are few (it skips ahead), else one pass with a
    //    64K-bit filter on the low half of each value.
    const char* info = reinterpret_cast<const char*>(info_);
    std::vector<bool> read(units_.size(), false);   // names_offset has answered for the unit
    if (offsets.size() <= 16) {
        for (std::uint32_t o : offsets) {
            char needle[4];
            std::memcpy(needle, &o, sizeof needle);
            std::size_t p = 0;
            while (p + sizeof needle <= info_size_) {
                const void* found = memmem(info + p, info_size_ - p, needle, sizeof needle);
                if (found == nullptr) {
                    break;
                }
                std::size_t u = unit_at(static_cast<std::size_t>(static_cast<const char*>(found) - info));
                // names_offset looks for every offset at once: whatever it answers, the
                // rest of this unit need not be searched.
                if (!hit[u] && !read[u]) {
                    read[u] = true;
                    hit[u] = names_offset(units_[u], offsets);
                }
                p = units_[u].end;
            }
        }
    } else if (info_size_ >= 4) {
        auto filter = std::make_unique<std::bitset<1 << 16>>();
        for (std::uint32_t o : offsets) {
            filter->set(o & 0xffff);
        }
        std::size_t u = 0;
        for (std::size_t i = 0; i + 4 <= info_size_;) {
            while (u + 1 < units_.size() && i >= units_[u].end) {
                ++u;
            }
            if (hit[u] || read[u]) {
                i = units_[u].end;
                continue;
            }
            std::uint32_t v;
            std::memcpy(&v, info_ + i, sizeof v);
            if ((*filter)[v & 0xffff] && std::binary_search(offsets.begin(), offsets.end(), v)) {
                read[u] = true;
                hit[u] = names_offset(units_[u], offsets);
                i = units_[u].end;
                continue;
            }
            ++i;
        }
    }
    std::vector<Dwarf_Off> out;
    for (std::size_t u = 0; u < units_.size(); ++u) {
        if (hit[u] || units_[u].always) {
            out.push_back(units_[u].die_offset);
        }
    }
    return out;
}

}  // namespace ompdbg::dwarf::internal
