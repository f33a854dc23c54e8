// The listings behind gdb's `info functions`, `info variables`, `info types` and `info
// sources`: every entry comes from the lazy name index (one walk of the DIEs, shared with
// the lookups by name) and the units' file tables; the front end filters and spells them.
#include "ompdbg/dwarf/debug_info.hpp"

#include "internal/debug_info_impl.hpp"
#include "internal/die_util.hpp"

#include <set>
#include <unordered_map>

#include <dwarf.h>

namespace ompdbg::dwarf {

using namespace internal;

namespace {

/// The file of the unit holding `die` (DW_AT_name, joined to DW_AT_comp_dir when relative).
std::string unit_file(Dwarf_Die die) {
    Dwarf_Die cu;
    if (dwarf_diecu(&die, &cu, nullptr, nullptr) == nullptr) {
        return {};
    }
    Dwarf_Attribute attr;
    const char* name = dwarf_formstring(dwarf_attr(&cu, DW_AT_name, &attr));
    if (name == nullptr) {
        return {};
    }
    const char* dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    if (name[0] != '/' && dir != nullptr && dir[0] == '/') {
        return std::string(dir) + "/" + name;
    }
    return name;
}

/// `path` (a file of the unit holding `die`, joined to its comp_dir) as gdb names it in
/// its listings: a unit compiled from a relative path (`cmake` builds: ../src/a.cpp) has
/// its relative directory entries kept relative (../src/a.hpp), not joined to comp_dir.
std::string listed_file_name(Dwarf_Die die, std::string path) {
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    if (dwarf_diecu(&die, &cu, nullptr, nullptr) == nullptr) {
        return path;
    }
    const char* name = dwarf_formstring(dwarf_attr(&cu, DW_AT_name, &attr));
    const char* dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    if (name == nullptr || name[0] == '/' || dir == nullptr || dir[0] != '/') {
        return path;
    }
    const std::string prefix = std::string(dir) + "/";
    if (path.starts_with(prefix) && path.size() > prefix.size()) {
        path.erase(0, prefix.size());
    }
    return path;
}

/// Where `die` is declared: its DW_AT_decl_file (through a specification or abstract
/// origin) resolved in its unit's file table, else the unit's file; and the line.
void fill_location(listed_symbol& s, std::unordered_map<const void*, std::string>& unit_files) {
    if (auto index = udata_of(s.die, DW_AT_decl_file)) {
        s.file = listed_file_name(s.die, cu_file_name(s.die, *index));
    }
    if (s.file.empty()) {
        Dwarf_Die cu;
        if (dwarf_diecu(&s.die, &cu, nullptr, nullptr) != nullptr) {
            auto [it, fresh] = unit_files.try_emplace(die_key(cu));
            if (fresh) {
                it->second = unit_file(s.die);
            }
            s.file = it->second;
        }
    }
    s.line = static_cast<int>(udata_of(s.die, DW_AT_decl_line).value_or(0));
}

/// A file-local variable without storage whose DW_AT_const_value is a number: gdb's
/// LOC_CONST, which info variables leaves out (a constant held as bytes, LOC_CONST_BYTES,
/// and an external one are listed).
bool is_integer_constant(Dwarf_Die die) {
    Dwarf_Attribute attr;
    // An external one (a class's static constant member) stays listed, as in gdb.
    if (dwarf_hasattr_integrate(&die, DW_AT_location) || flag_of(die, DW_AT_external) ||
        dwarf_attr_integrate(&die, DW_AT_const_value, &attr) == nullptr) {
        return false;
    }
    switch (dwarf_whatform(&attr)) {
    case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
    case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_implicit_const:
        return true;
    default:
        return false;
    }
}

}  // namespace

std::vector<listed_symbol> debug_info::list_symbols(symbol_listing kind) const {
    const dwarf_index& idx = impl_->index();
    std::vector<listed_symbol> out;
    std::unordered_map<const void*, std::string> unit_files;
    auto add = [&](Dwarf_Die die, const std::string& name, bool with_linkage) {
        listed_symbol s;
        s.name = name;
        s.die = die;
        s.tag = dwarf_tag(&die);
        if (with_linkage) {
            s.linkage_name = linkage_name_of(die);
            s.is_external = flag_of(die, DW_AT_external);
        }
        fill_location(s, unit_files);
        out.push_back(std::move(s));
    };
    switch (kind) {
    case symbol_listing::functions:
        for (const auto& f : idx.functions()) {
            if (!f.inlined && !f.name.empty()) {
                add(f.die, f.name, true);
            }
        }
        break;
    case symbol_listing::variables:
        for (const auto& g : idx.globals()) {
            if (g.has_location && !g.name.empty() && !is_integer_constant(g.die)) {
                add(g.die, g.name, true);
            }
        }
        break;
    case symbol_listing::types:
        for (const auto& t : idx.types()) {
            if (!t.declaration && !t.name.empty()) {
                add(t.die, t.name, false);
            }
        }
        break;
    }
    return out;
}

std::vector<std::string> debug_info::source_files_in_order() const {
    impl_->load_cus();
    std::vector<std::string> out;
    std::set<std::string> seen;
    auto note = [&](std::string f) {
        if (!f.empty() && seen.insert(f).second) {
            out.push_back(std::move(f));
        }
    };
    for (const auto& cu : impl_->cus) {
        Dwarf_Die die = cu->die;
        note(unit_file(die));
        Dwarf_Files* files = nullptr;
        std::size_t n = 0;
        if (dwarf_getsrcfiles(&die, &files, &n) != 0) {
            continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
            // DWARF 4 has no file 0: libdw names it "???".
            std::string f = cu_file_name(die, i);
            if (f != "???" && !f.ends_with("/???")) {
                note(std::move(f));
            }
        }
    }
    return out;
}

}  // namespace ompdbg::dwarf
