#include "internal/elf_handle.hpp"

#include "ompdbg/base/error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdbg::dwarf::internal {

namespace {

void ensure_libelf_version() {
    static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
    if (!ok) {
        error::send("libelf is out of date");
    }
}

[[noreturn]] void not_executable(const std::filesystem::path& path, const char* why) {
    error::send("\"" + path.string() + "\": not in executable format: " + why);
}

// Checks everything libelf would otherwise trust blindly: the program and section header
// tables and the section name table must lie inside the file. A section whose contents
// run past the end is tolerated here (it is skipped where it is read), as BFD does.
void validate(const std::filesystem::path& path, Elf* elf, std::uint64_t size) {
    if (elf_kind(elf) != ELF_K_ELF) {
        not_executable(path, "file format not recognized");
    }
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr) == nullptr) {
        not_executable(path, size < 64 ? "file truncated" : "file format not recognized");
    }
    if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64) {
        not_executable(path, "file format not recognized");
    }
    if (ehdr.e_phnum > 0) {
        std::uint64_t end = ehdr.e_phoff + std::uint64_t(ehdr.e_phnum) * ehdr.e_phentsize;
        if (ehdr.e_phoff > size || end > size) {
            not_executable(path, "file truncated");
        }
    }
    // The header's own count: libelf quietly reports 0 sections when the table lies past
    // the end of the file, which gdb calls truncated.
    if (ehdr.e_shoff != 0) {
        std::uint64_t end = ehdr.e_shoff + std::uint64_t(std::max<unsigned>(ehdr.e_shnum, 1)) * ehdr.e_shentsize;
        if (ehdr.e_shoff > size || end > size || end < ehdr.e_shoff) {
            not_executable(path, "file truncated");
        }
    }
    std::size_t shnum = 0;
    if (elf_getshdrnum(elf, &shnum) != 0) {
        not_executable(path, "file truncated");
    }
    if (shnum > 0) {
        std::uint64_t end = ehdr.e_shoff + std::uint64_t(shnum) * ehdr.e_shentsize;
        if (ehdr.e_shoff > size || end > size || end < ehdr.e_shoff) {
            not_executable(path, "file truncated");
        }
        std::size_t shstrndx = 0;
        if (elf_getshdrstrndx(elf, &shstrndx) != 0 || shstrndx >= shnum) {
            not_executable(path, "file format not recognized");
        }
        Elf_Scn* scn = elf_getscn(elf, shstrndx);
        GElf_Shdr shdr;
        if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) {
            not_executable(path, "file format not recognized");
        }
        if (shdr.sh_type != SHT_NOBITS &&
            (shdr.sh_offset > size || shdr.sh_size > size - shdr.sh_offset)) {
            not_executable(path, "file truncated");
        }
    }
}

}  // namespace

elf_handle::~elf_handle() {
    if (elf_ != nullptr) {
        elf_end(elf_);
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

elf_handle::elf_handle(elf_handle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), elf_(std::exchange(other.elf_, nullptr)),
      size_(other.size_) {}

elf_handle& elf_handle::operator=(elf_handle&& other) noexcept {
    if (this != &other) {
        elf_handle tmp(std::move(other));
        std::swap(fd_, tmp.fd_);
        std::swap(elf_, tmp.elf_);
        std::swap(size_, tmp.size_);
    }
    return *this;
}

elf_handle elf_handle::open(const std::filesystem::path& path) {
    ensure_libelf_version();
    elf_handle h;
    h.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (h.fd_ < 0) {
        error::send_errno(path.string());
    }
    struct stat st {};
    if (::fstat(h.fd_, &st) != 0) {
        error::send_errno(path.string());
    }
    if (S_ISDIR(st.st_mode)) {
        error::send(path.string() + ": Is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        not_executable(path, "file format not recognized");
    }
    h.size_ = static_cast<std::uint64_t>(st.st_size);
    // Mapped, as libdwfl and gdb do: the sections we read stay in the page cache (shared by
    // every process reading the file) instead of a private copy each. The cost: a file
    // truncated in place while we hold it (not a rebuild: linkers write a new inode) makes
    // a later read of its lost pages fault.
    h.elf_ = elf_begin(h.fd_, ELF_C_READ_MMAP, nullptr);
    if (h.elf_ == nullptr) {
        not_executable(path, "file format not recognized");
    }
    validate(path, h.elf_, h.size_);
    return h;
}

std::optional<elf_handle> elf_handle::try_open(const std::filesystem::path& path) {
    try {
        return open(path);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

bool elf_handle::section_in_bounds(const GElf_Shdr& shdr) const {
    if (shdr.sh_type == SHT_NOBITS) {
        return true;
    }
    return shdr.sh_offset <= size_ && shdr.sh_size <= size_ - shdr.sh_offset;
}

std::optional<std::uint32_t> file_crc32(const std::filesystem::path& path) {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) {
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    std::uint32_t crc = 0xffffffffu;
    std::vector<unsigned char> buf(1 << 16);
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) {
            break;
        }
        for (ssize_t i = 0; i < n; ++i) {
            crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
        }
    }
    ::close(fd);
    return crc ^ 0xffffffffu;
}

}  // namespace ompdbg::dwarf::internal
