#pragma once
// RAII over an open file descriptor and the libelf descriptor read from it, plus the
// checks that make a damaged file an error instead of a crash later.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <gelf.h>
#include <libelf.h>

namespace ompdbg::dwarf::internal {

class elf_handle {
public:
    elf_handle() = default;
    ~elf_handle();
    elf_handle(const elf_handle&) = delete;
    elf_handle& operator=(const elf_handle&) = delete;
    elf_handle(elf_handle&& other) noexcept;
    elf_handle& operator=(elf_handle&& other) noexcept;

    /// Opens `path` and validates it as an ELF file whose headers lie inside the file.
    /// Throws ompdbg::error with a gdb-like message.
    static elf_handle open(const std::filesystem::path& path);
    /// Like open() but returns nullopt instead of throwing (separate debug files).
    static std::optional<elf_handle> try_open(const std::filesystem::path& path);

    Elf* get() const { return elf_; }
    std::uint64_t file_size() const { return size_; }
    int fd() const { return fd_; }

    /// True when section `scn` has file contents that lie inside the file (or is NOBITS).
    bool section_in_bounds(const GElf_Shdr& shdr) const;

private:
    int fd_ = -1;
    Elf* elf_ = nullptr;
    std::uint64_t size_ = 0;
};

/// CRC-32 (the .gnu_debuglink flavour, same as zlib's crc32) of a whole file; nullopt when
/// it cannot be read.
std::optional<std::uint32_t> file_crc32(const std::filesystem::path& path);

}  // namespace ompdbg::dwarf::internal
