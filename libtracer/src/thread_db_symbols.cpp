#include "internal/thread_db_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

namespace ompdbg::tracer::detail {

namespace {

bool read_at(int fd, void* buf, std::size_t size, std::uint64_t offset) {
    ssize_t n = ::pread(fd, buf, size, static_cast<off_t>(offset));
    return n >= 0 && static_cast<std::size_t>(n) == size;
}

}  // namespace

symbol_table::symbol_table(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } guard{fd};

    Elf64_Ehdr eh{};
    if (!read_at(fd, &eh, sizeof eh, 0) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_MAG0] != ELFMAG0 || eh.e_ident[EI_MAG1] != ELFMAG1 ||
        eh.e_ident[EI_MAG2] != ELFMAG2 || eh.e_ident[EI_MAG3] != ELFMAG3 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 65000) {
        return;
    }
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    if (!read_at(fd, sh.data(), sh.size() * sizeof(Elf64_Shdr), eh.e_shoff)) {
        return;
    }
    constexpr std::uint64_t max_table = 256ULL << 20;   // refuse absurd sizes (corrupt file)
    for (auto& s : sh) {
        if ((s.sh_type != SHT_DYNSYM && s.sh_type != SHT_SYMTAB) || s.sh_link >= sh.size() ||
            s.sh_entsize != sizeof(Elf64_Sym) || s.sh_size > max_table) {
            continue;
        }
        const Elf64_Shdr& strs = sh[s.sh_link];
        if (strs.sh_size > max_table) {
            continue;
        }
        std::vector<Elf64_Sym> syms(s.sh_size / sizeof(Elf64_Sym));
        std::vector<char> names(strs.sh_size + 1, '\0');
        if (!read_at(fd, syms.data(), syms.size() * sizeof(Elf64_Sym), s.sh_offset) ||
            !read_at(fd, names.data(), strs.sh_size, strs.sh_offset)) {
            continue;
        }
        for (auto& sym : syms) {
            if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strs.sh_size || sym.st_name == 0) {
                continue;
            }
            // .dynsym first, then .symtab: the first definition of a name wins.
            symbols_.try_emplace(std::string(names.data() + sym.st_name), sym.st_value);
        }
    }
}

std::optional<std::uint64_t> symbol_table::find(const std::string& name) const {
    auto it = symbols_.find(name);
    if (it == symbols_.end()) {
        return std::nullopt;
    }
    return it->second;
}

}  // namespace ompdbg::tracer::detail
