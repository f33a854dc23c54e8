// elf_file's PLT stubs ("name@plt") and GOT slots, read from the dynamic relocations on
// first use: x/i call targets (call 0x... <setvbuf@plt>) and frames stopped in a stub.

#include "ompdbg/dwarf/elf_file.hpp"

#include "internal/elf_file_impl.hpp"

#include <cstring>

#include <elf.h>
#include <gelf.h>

namespace ompdbg::dwarf {

std::optional<std::string> elf_file::got_slot_symbol(std::uint64_t slot) const {
    OMPDBG_FORWARD(got_slot_symbol(slot));
    std::call_once(impl_->got_once, [&] {
        const elf_handle& h = impl_->main;
        for (Elf_Scn* scn = elf_nextscn(h.get(), nullptr); scn; scn = elf_nextscn(h.get(), scn)) {
            GElf_Shdr shdr;
            if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_RELA || !h.section_in_bounds(shdr)) {
                continue;
            }
            Elf_Scn* symtab = elf_getscn(h.get(), shdr.sh_link);
            GElf_Shdr sym_shdr;
            Elf_Data* rel = elf_getdata(scn, nullptr);
            Elf_Data* syms = symtab != nullptr ? elf_getdata(symtab, nullptr) : nullptr;
            if (rel == nullptr || syms == nullptr || gelf_getshdr(symtab, &sym_shdr) == nullptr ||
                shdr.sh_entsize == 0) {
                continue;
            }
            std::size_t n = shdr.sh_size / shdr.sh_entsize;
            for (std::size_t i = 0; i < n; ++i) {
                GElf_Rela r;
                if (gelf_getrela(rel, static_cast<int>(i), &r) == nullptr) {
                    break;
                }
                auto type = GELF_R_TYPE(r.r_info);
                if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) {
                    continue;
                }
                GElf_Sym sym;
                if (gelf_getsym(syms, static_cast<int>(GELF_R_SYM(r.r_info)), &sym) == nullptr) {
                    continue;
                }
                const char* name = elf_strptr(h.get(), sym_shdr.sh_link, sym.st_name);
                if (name != nullptr && *name != '\0') {
                    std::string_view n(name);
                    impl_->got_names[r.r_offset] = std::string(n.substr(0, n.find('@')));
                }
            }
        }
    });
    auto it = impl_->got_names.find(slot);
    if (it == impl_->got_names.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<symbol> elf_file::plt_symbol_at(std::uint64_t addr) const {
    OMPDBG_FORWARD(plt_symbol_at(addr));
    std::call_once(impl_->plt_once, [&] {
        const elf_handle& h = impl_->main;
        std::size_t shstrndx = 0;
        if (elf_getshdrstrndx(h.get(), &shstrndx) != 0) {
            return;
        }
        for (Elf_Scn* scn = elf_nextscn(h.get(), nullptr); scn; scn = elf_nextscn(h.get(), scn)) {
            GElf_Shdr shdr;
            if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_PROGBITS) {
                continue;
            }
            const char* n = elf_strptr(h.get(), shstrndx, shdr.sh_name);
            std::string_view name = n != nullptr ? n : "";
            if (name != ".plt" && name != ".plt.sec" && name != ".plt.got") {
                continue;
            }
            Elf_Data* d = elf_getdata(scn, nullptr);
            if (d == nullptr || d->d_buf == nullptr || d->d_size != shdr.sh_size) {
                continue;
            }
            // Entries are 16 bytes (.plt.got: 8 without IBT); a stub jumps through its slot
            // with `[endbr64] [bnd] jmp *rel32(%rip)` (ff 25).
            std::uint64_t entry = shdr.sh_entsize != 0 ? shdr.sh_entsize : 16;
            if (name == ".plt.got" && shdr.sh_entsize == 0 && shdr.sh_size % 16 != 0) {
                entry = 8;
            }
            const auto* bytes = static_cast<const unsigned char*>(d->d_buf);
            for (std::uint64_t at = 0; at + entry <= shdr.sh_size; at += entry) {
                for (std::uint64_t i = 0; i + 6 <= entry; ++i) {
                    if (bytes[at + i] != 0xff || bytes[at + i + 1] != 0x25) {
                        continue;
                    }
                    std::int32_t rel = 0;
                    std::memcpy(&rel, bytes + at + i + 2, 4);
                    std::uint64_t slot = shdr.sh_addr + at + i + 6 + static_cast<std::int64_t>(rel);
                    if (auto target = got_slot_symbol(slot)) {
                        impl_->plt_stubs[shdr.sh_addr + at] =
                            symbol{*target + "@plt", shdr.sh_addr + at, entry, symbol_kind::function, false, false,
                                   section_kind::code};
                    }
                    break;
                }
            }
        }
    });
    auto it = impl_->plt_stubs.upper_bound(addr);
    if (it == impl_->plt_stubs.begin()) {
        return std::nullopt;
    }
    --it;
    if (addr >= it->second.value + it->second.size) {
        return std::nullopt;
    }
    return it->second;
}

std::vector<symbol> elf_file::plt_symbols() const {
    OMPDBG_FORWARD(plt_symbols());
    (void)plt_symbol_at(0);   // reads the stubs once
    std::vector<symbol> out;
    for (const auto& [addr, sym] : impl_->plt_stubs) {
        out.push_back(sym);
    }
    return out;
}

#undef OMPDBG_FORWARD

}  // namespace ompdbg::dwarf
