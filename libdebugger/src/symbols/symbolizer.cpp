#include "ompdbg/debugger/symbols/symbolizer.hpp"

#include <cxxabi.h>
#include <dwarf.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/language.hpp"
#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::debugger {

namespace {

std::string section_of(const dwarf::elf_file& elf, std::uint64_t file_addr) {
    static constexpr const char* names[] = {".text", ".data", ".bss", ".rodata", ".tdata", ".tbss",
                                            ".data.rel.ro", ".init", ".fini", ".plt", ".plt.got",
                                            ".plt.sec", ".got", ".got.plt", ".init_array", ".fini_array"};
    for (const char* n : names) {
        if (auto sec = elf.section(n); sec && file_addr >= sec->addr && file_addr < sec->addr + sec->size) {
            return n;
        }
    }
    return {};
}

/// gdb's type spelling inside a physname is the demangler's: "char**", not "char **".
std::string demangler_spacing(std::string text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == ' ' && i + 1 < text.size() && (text[i + 1] == '*' || text[i + 1] == '&')) {
            continue;
        }
        out += text[i];
    }
    return out;
}

/// True when the subprogram has formal parameters and every one is DW_AT_artificial.
bool has_only_artificial_parameters(Dwarf_Die die) {
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) {
        return false;
    }
    bool any = false;
    do {
        if (dwarf_tag(&child) == DW_TAG_formal_parameter) {
            Dwarf_Attribute attr;
            bool artificial = false;
            if (dwarf_formflag(dwarf_attr(&child, DW_AT_artificial, &attr), &artificial) != 0 || !artificial) {
                return false;
            }
            any = true;
        } else if (dwarf_tag(&child) == DW_TAG_unspecified_parameters) {
            return false;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return any;
}

/// gdb's dwarf2_physname of the function instance `fn` of a C++ unit; nullopt in a C unit.
std::optional<std::string> cplus_physname(const dwarf::function& fn) {
    dwarf::type fn_type(fn.die);
    if (!fn_type.is_cplus()) {
        return std::nullopt;
    }
    if (!fn.linkage_name.empty()) {
        std::string d = demangle(fn.linkage_name);
        if (d != fn.linkage_name) {
            return drop_return_type(d);
        }
    }
    // Without a linkage name (main, gcc's static functions) gdb builds the name from the
    // DIE: the parameter types only for a DW_TAG_subprogram, an inlined copy keeps its name.
    if (fn.is_inlined) {
        return fn.name;
    }
    std::string params;
    for (const auto& p : fn_type.parameters()) {
        params += (params.empty() ? "" : ", ") + demangler_spacing(p.name());
    }
    if (fn_type.is_varargs()) {
        params += params.empty() ? "..." : ", ...";
    }
    // gdb's c_type_print_args leaves out artificial parameters (gcc's outlined OpenMP
    // bodies take only `.omp_data_i`) and then prints "void" for an empty list.
    if (has_only_artificial_parameters(fn.die)) {
        params = "void";
    }
    return fn.name + "(" + params + ")";
}

/// gdb's build_address_symbolic: the out-of-line DWARF function of a C unit holding
/// `file_addr` names the address, unless the minimal symbol there (starting at `msym_start`) starts after
/// the function's entry (a `.cold` part). nullopt without debug information.
std::optional<dwarf::function> labelling_function(const dwarf::elf_file& elf, std::uint64_t file_addr,
                                                  std::optional<std::uint64_t> msym_start) {
    auto* info = elf.has_debug_info() ? elf.debug() : nullptr;
    if (info == nullptr) {
        return std::nullopt;
    }
    try {
        auto chain = info->function_chain_at(file_addr);
        if (chain.empty() || chain.back().is_inlined || chain.back().entry_pc > file_addr ||
            (msym_start && *msym_start > chain.back().entry_pc)) {
            return std::nullopt;
        }
        Dwarf_Die die = chain.back().die;
        if (dwarf::die_is_cplus(die)) {
            return std::nullopt;   // C++ names come from the minimal symbol or the physname
        }
        return chain.back();
    } catch (const ompdbg::error&) {
        return std::nullopt;   // unreadable DWARF: the minimal symbol serves
    }
}

/// The name gdb gives a function where it labels an address: its linkage name when it has
/// one (the mangled C++ name; glibc's `__GI___libc_write` for `write`), else its name.
std::string assembler_name(const dwarf::function& fn) {
    return fn.linkage_name.empty() ? fn.name : fn.linkage_name;
}

std::string with_offset(const std::string& name, std::uint64_t offset) {
    return offset == 0 ? name : fmt::format("{}+{}", name, offset);
}

/// The physname of the out-of-line DWARF function holding `file_addr` in a C++ unit, if any.
std::optional<std::string> cplus_physname(const dwarf::elf_file& elf, std::uint64_t file_addr) {
    auto* info = elf.has_debug_info() ? elf.debug() : nullptr;
    if (info == nullptr) {
        return std::nullopt;
    }
    auto chain = info->function_chain_at(file_addr);
    if (chain.empty()) {
        return std::nullopt;
    }
    return cplus_physname(chain.back());   // the out-of-line function, as the ELF symbol names it
}

}  // namespace

std::string function_print_name(const dwarf::function& fn) {
    try {
        if (auto phys = cplus_physname(fn)) {
            return *phys;
        }
    } catch (const ompdbg::error&) {
        // Unreadable DWARF: the plain name serves.
    }
    return fn.name;
}

std::string demangle(const std::string& name) {
    if (!name.starts_with("_Z")) {
        return name;
    }
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
    return status == 0 && d ? std::string(d.get()) : name;
}

// The demangler writes a template function's return type first, separated by the one space
// at template depth 0 before the parameter list ("(anonymous namespace)" and conversion
// operators, "operator int()", are the spaces that are not it).
std::string drop_return_type(const std::string& demangled) {
    int angle = 0;
    std::size_t last_space = std::string::npos;
    for (std::size_t i = 0; i < demangled.size(); ++i) {
        char c = demangled[i];
        if (demangled.compare(i, 21, "(anonymous namespace)") == 0) {
            i += 20;
            continue;
        }
        if (demangled.compare(i, 8, "operator") == 0) {
            break;   // "operator<", "operator()": the name has begun
        }
        if (c == '<') {
            ++angle;
        } else if (c == '>') {
            --angle;
        } else if (c == '(' && angle == 0) {
            break;
        } else if (c == ' ' && angle == 0) {
            last_space = i;
        }
    }
    return last_space == std::string::npos ? demangled : demangled.substr(last_space + 1);
}

module_view module_for(session& s, std::uint64_t addr) {
    module_view mv;
    if (tracer::target* tgt = s.target()) {
        if (const tracer::loaded_module* m = tgt->module_at(virt_addr(addr))) {
            mv.elf = m->elf;
            mv.bias = m->load_bias;
        }
    } else if (s.program()) {
        auto m = s.static_executable();
        mv.elf = m.elf;
        mv.bias = m.load_bias;
    }
    return mv;
}

std::optional<symbolized> symbolize_address(session& s, std::uint64_t addr) {
    tracer::target* tgt = s.target();
    std::shared_ptr<dwarf::elf_file> elf;
    std::uint64_t file_addr = addr;
    const tracer::loaded_module* mod = nullptr;
    if (tgt != nullptr) {
        mod = tgt->module_at(virt_addr(addr));
        if (mod == nullptr || !mod->elf) {
            return std::nullopt;
        }
        elf = mod->elf;
        file_addr = mod->to_file(virt_addr(addr));
    } else if (s.program()) {
        auto m = s.static_executable();
        if (addr < m.load_bias) {
            return std::nullopt;
        }
        elf = m.elf;
        file_addr = m.to_file(virt_addr(addr));
    }
    if (!elf) {
        return std::nullopt;
    }
    auto sym = elf->symbol_at(file_addr);
    if (!sym || sym->name.empty()) {
        sym = elf->plt_symbol_at(file_addr);   // gdb's "puts@plt"
    }
    if (!sym || sym->name.empty()) {
        return std::nullopt;
    }
    symbolized out;
    out.name = sym->name;
    out.offset = file_addr - sym->value;
    out.module = mod;
    out.section = section_of(*elf, file_addr);
    out.elf = elf;
    out.file_addr = file_addr;
    return out;
}

std::string symbol_label(session& s, std::uint64_t addr) {
    auto sym = symbolize_address(s, addr);
    module_view mv = module_for(s, addr);
    if (mv.elf && addr >= mv.bias) {
        std::uint64_t file_addr = addr - mv.bias;
        std::optional<std::uint64_t> msym_start;
        if (sym) {
            msym_start = sym->file_addr - sym->offset;
        }
        if (auto fn = labelling_function(*mv.elf, file_addr, msym_start)) {
            return with_offset(assembler_name(*fn), file_addr - fn->entry_pc);
        }
    }
    if (!sym) {
        return {};
    }
    return with_offset(sym->name, sym->offset);
}

std::string value_symbol_label(session& s, std::uint64_t addr) {
    auto sym = symbolize_address(s, addr);
    if (sym) {
        // A C function's name where gdb prints a pointer: its linkage name when it has one
        // (`<__printf>` for printf, whose ELF aliases all start there); C++: below.
        auto fn = labelling_function(*sym->elf, sym->file_addr, sym->file_addr - sym->offset);
        if (fn) {
            return with_offset(assembler_name(*fn), sym->file_addr - fn->entry_pc);
        }
    }
    if (!sym) {
        return {};
    }
    std::string name = demangle(sym->name);
    try {
        if (auto phys = cplus_physname(*sym->elf, sym->file_addr)) {
            name = *phys;
        }
    } catch (const ompdbg::error&) {
        // Unreadable DWARF: the minimal symbol's name serves.
    }
    return sym->offset == 0 ? name : fmt::format("{}+{}", name, sym->offset);
}

}  // namespace ompdbg::debugger
