#include "internal/section_inflate.hpp"

#include "internal/cache_files.hpp"

#include "ompdbg/base/cache_dir.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <zlib.h>

namespace ompdbg::dwarf::internal {

namespace fs = std::filesystem;

namespace {

// OMPDBG_SECTION_CACHE: "off" leaves compressed sections to libdw (the behaviour before
// the cache); a directory replaces the default $XDG_CACHE_HOME/ompdbg/sections (or
// ~/.cache/ompdbg/sections).
enum class cache_mode { off, on };

cache_mode mode_from_env() {
    const char* v = std::getenv("OMPDBG_SECTION_CACHE");
    return v != nullptr && std::string_view(v) == "off" ? cache_mode::off : cache_mode::on;
}

std::optional<fs::path> cache_dir() {
    if (const char* v = std::getenv("OMPDBG_SECTION_CACHE"); v != nullptr && *v != '\0') {
        return fs::path(v);
    }
    if (auto home = cache_home()) {
        return *home / "sections";
    }
    return std::nullopt;
}

// A private read-only mapping of a cached file holding exactly `size` bytes; nullptr when
// there is none (or it is incomplete: written by a session that died). A use marks it
// recent for evict_least_recent().
void* map_cached(const fs::path& p, std::size_t size) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return nullptr;
    }
    struct stat st {};
    void* addr = nullptr;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) == size) {
        addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr == MAP_FAILED) {
            addr = nullptr;
        } else {
            ::futimens(fd, nullptr);   // now: least recently used goes first
        }
    }
    ::close(fd);
    return addr;
}

// Writes `bytes` to `p` whole or not at all (see cache_files.hpp); failures only cost the
// next session an inflate.
void write_cached(const fs::path& p, const unsigned char* bytes, std::size_t size) {
    if (auto failure = write_file_atomically(p, bytes, size)) {
        log::write(log::channel::dwarf, "section cache: cannot write {}: {}", p.string(), *failure);
        return;
    }
    // OMPDBG_SECTION_CACHE_MAX_MB bounds the directory (default 2048 MB).
    evict_least_recent(p.parent_path(), p, megabytes_from_env("OMPDBG_SECTION_CACHE_MAX_MB", 2048));
}

}  // namespace

inflated_sections::~inflated_sections() {
    for (auto& m : mappings_) {
        ::munmap(m.addr, m.size);
    }
}

void inflated_sections::inflate(const elf_handle& h, const std::optional<std::string>& build_id) {
    static const cache_mode mode = mode_from_env();
    if (mode == cache_mode::off) {
        return;
    }
    Elf* elf = h.get();
    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
        return;
    }
    std::optional<fs::path> dir = build_id ? cache_dir() : std::nullopt;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr || !(shdr.sh_flags & SHF_COMPRESSED) ||
            shdr.sh_type == SHT_NOBITS || !h.section_in_bounds(shdr)) {
            continue;
        }
        const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
        if (name == nullptr || !std::string_view(name).starts_with(".debug_")) {
            continue;
        }
        Elf_Data* raw = elf_rawdata(scn, nullptr);
        if (raw == nullptr || raw->d_buf == nullptr || raw->d_size < sizeof(Elf64_Chdr)) {
            continue;
        }
        Elf64_Chdr chdr;
        std::memcpy(&chdr, raw->d_buf, sizeof chdr);
        if (chdr.ch_type != ELFCOMPRESS_ZLIB || chdr.ch_size == 0 || chdr.ch_size > (std::uint64_t(1) << 34)) {
            continue;   // zstd and anything odd: libdw's own path
        }
        std::size_t size = chdr.ch_size;
        // Key: build-id (the contents), the file's size and the section's place in it.
        std::optional<fs::path> cached;
        if (dir) {
            cached = *dir / fmt::format("{}-{}-{}-{}", *build_id, h.file_size(), elf_ndxscn(scn), size);
        }
        const unsigned char* bytes = nullptr;
        if (cached) {
            if (void* addr = map_cached(*cached, size)) {
                mappings_.push_back({addr, size});
                bytes = static_cast<const unsigned char*>(addr);
            }
        }
        if (bytes == nullptr) {
            auto buf = std::make_unique<unsigned char[]>(size);
            uLongf out = size;
            const auto* in = static_cast<const Bytef*>(raw->d_buf) + sizeof(Elf64_Chdr);
            if (::uncompress(buf.get(), &out, in, raw->d_size - sizeof(Elf64_Chdr)) != Z_OK || out != size) {
                log::write(log::channel::dwarf, "{}: cannot inflate", name);
                continue;
            }
            if (cached) {
                write_cached(*cached, buf.get(), size);
            }
            bytes = buf.get();
            buffers_.push_back(std::move(buf));
        }
        // What elf_compress(scn, 0, 0) does, with our bytes: the header says uncompressed
        // and the section's data is the inflated image.
        const GElf_Shdr original = shdr;
        shdr.sh_flags &= ~static_cast<GElf_Xword>(SHF_COMPRESSED);
        shdr.sh_size = size;
        shdr.sh_addralign = chdr.ch_addralign;
        if (gelf_update_shdr(scn, &shdr) == 0) {
            continue;
        }
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (data == nullptr) {
            GElf_Shdr back = original;   // as it was: libdw inflates it
            gelf_update_shdr(scn, &back);
            continue;
        }
        data->d_buf = const_cast<unsigned char*>(bytes);
        data->d_size = size;
        data->d_type = ELF_T_BYTE;
        data->d_off = 0;
        data->d_align = chdr.ch_addralign;
    }
}

}  // namespace ompdbg::dwarf::internal
