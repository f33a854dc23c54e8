#include "internal/die_util.hpp"

#include <dwarf.h>

namespace ompdbg::dwarf::internal {

int tag_of(Dwarf_Die die) { return dwarf_tag(&die); }

std::string name_of(Dwarf_Die die) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_name, &attr) == nullptr) {
        return {};
    }
    const char* s = dwarf_formstring(&attr);
    return s ? s : "";
}

std::string linkage_name_of(Dwarf_Die die) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr) == nullptr &&
        dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &attr) == nullptr) {
        return {};
    }
    const char* s = dwarf_formstring(&attr);
    return s ? s : "";
}

std::optional<Dwarf_Die> ref_attr(Dwarf_Die die, unsigned attr_name, bool integrate) {
    Dwarf_Attribute attr;
    Dwarf_Attribute* a = integrate ? dwarf_attr_integrate(&die, attr_name, &attr)
                                   : dwarf_attr(&die, attr_name, &attr);
    if (a == nullptr) {
        return std::nullopt;
    }
    Dwarf_Die out;
    if (dwarf_formref_die(a, &out) == nullptr) {
        return std::nullopt;
    }
    return out;
}

bool flag_of(Dwarf_Die die, unsigned attr_name, bool integrate) {
    Dwarf_Attribute attr;
    Dwarf_Attribute* a = integrate ? dwarf_attr_integrate(&die, attr_name, &attr)
                                   : dwarf_attr(&die, attr_name, &attr);
    bool v = false;
    return a != nullptr && dwarf_formflag(a, &v) == 0 && v;
}

std::optional<std::uint64_t> udata_of(Dwarf_Die die, unsigned attr_name, bool integrate) {
    Dwarf_Attribute attr;
    Dwarf_Attribute* a = integrate ? dwarf_attr_integrate(&die, attr_name, &attr)
                                   : dwarf_attr(&die, attr_name, &attr);
    Dwarf_Word v = 0;
    if (a == nullptr || dwarf_formudata(a, &v) != 0) {
        return std::nullopt;
    }
    return v;
}

std::vector<addr_range> ranges_of(Dwarf_Die die) {
    std::vector<addr_range> out;
    Dwarf_Addr base = 0, lo = 0, hi = 0;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
        if (hi > lo) {
            out.emplace_back(lo, hi);
        }
        if (out.size() > 100000) {
            break;   // a corrupt range list
        }
    }
    return out;
}

std::optional<std::uint64_t> entry_pc_of(Dwarf_Die die, const std::vector<addr_range>& ranges) {
    Dwarf_Attribute attr;
    Dwarf_Addr pc = 0;
    if (dwarf_attr(&die, DW_AT_entry_pc, &attr) != nullptr) {
        if (dwarf_formaddr(&attr, &pc) == 0) {
            return pc;
        }
        // DWARF 5: a constant is an offset from the entity's base (low) address.
        Dwarf_Word off = 0;
        if (dwarf_formudata(&attr, &off) == 0) {
            Dwarf_Addr low = 0;
            if (dwarf_lowpc(&die, &low) == 0) {
                return low + off;
            }
            if (!ranges.empty()) {
                return ranges.front().first + off;
            }
        }
    }
    if (dwarf_lowpc(&die, &pc) == 0) {
        return pc;
    }
    if (!ranges.empty()) {
        return ranges.front().first;
    }
    return std::nullopt;
}

bool has_pc(Dwarf_Die die, std::uint64_t addr) { return dwarf_haspc(&die, addr) > 0; }

std::string decl_file_of(Dwarf_Die die) {
    const char* f = dwarf_decl_file(&die);
    return f ? f : "";
}

int decl_line_of(Dwarf_Die die) {
    int line = 0;
    if (dwarf_decl_line(&die, &line) != 0) {
        return 0;
    }
    return line;
}

std::string cu_file_name(Dwarf_Die die, std::uint64_t index) {
    Dwarf_Die cu;
    if (dwarf_diecu(&die, &cu, nullptr, nullptr) == nullptr) {
        return {};
    }
    Dwarf_Files* files = nullptr;
    std::size_t n = 0;
    if (dwarf_getsrcfiles(&cu, &files, &n) != 0 || index >= n) {
        return {};
    }
    const char* f = dwarf_filesrc(files, index, nullptr, nullptr);
    if (f == nullptr) {
        return {};
    }
    // A directory entry relative to the unit's comp_dir (`gcc -g src/a.c`), as line rows join it.
    Dwarf_Attribute attr;
    const char* dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    if (f[0] != '/' && f[0] != '\0' && dir != nullptr && dir[0] == '/') {
        return std::string(dir) + "/" + f;
    }
    return f;
}

}  // namespace ompdbg::dwarf::internal
