#include "internal/elf_lookup.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace ompdbg::tracer::internal {

std::optional<std::uint64_t> elf_symbol_value(const std::filesystem::path& path, std::string_view name) {
    if (elf_version(EV_CURRENT) == EV_NONE) {
        return std::nullopt;
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    std::optional<std::uint64_t> result;
    if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
        Elf_Scn* scn = nullptr;
        while (!result && (scn = elf_nextscn(elf, scn)) != nullptr) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
                sh.sh_entsize == 0) {
                continue;
            }
            Elf_Data* data = elf_getdata(scn, nullptr);
            if (!data) {
                continue;
            }
            std::size_t count = sh.sh_size / sh.sh_entsize;
            for (std::size_t i = 0; i < count; ++i) {
                GElf_Sym sym;
                if (!gelf_getsym(data, static_cast<int>(i), &sym)) {
                    break;
                }
                const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
                if (!n) {
                    continue;
                }
                std::string_view sv(n);
                if (auto at = sv.find('@'); at != std::string_view::npos) {
                    sv = sv.substr(0, at);
                }
                if (sv == name && sym.st_shndx != SHN_UNDEF) {
                    result = sym.st_value;
                    break;
                }
            }
        }
        elf_end(elf);
    }
    ::close(fd);
    return result;
}

}  // namespace ompdbg::tracer::internal
