#include "symbolizer.hpp"

#include <fmt/format.h>

#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::app {

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

}  // namespace

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
        try {
            elf = s.elf_for(*s.program());
        } catch (const ompdbg::error&) {
            return std::nullopt;
        }
    }
    if (!elf) {
        return std::nullopt;
    }
    auto sym = elf->symbol_at(file_addr);
    if (!sym || sym->name.empty()) {
        return std::nullopt;
    }
    symbolized out;
    out.name = sym->name;
    out.offset = file_addr - sym->value;
    out.module = mod;
    out.section = section_of(*elf, file_addr);
    return out;
}

std::string symbol_label(session& s, std::uint64_t addr) {
    auto sym = symbolize_address(s, addr);
    if (!sym) {
        return {};
    }
    return sym->offset == 0 ? sym->name : fmt::format("{}+{}", sym->name, sym->offset);
}

}  // namespace ompdbg::app
