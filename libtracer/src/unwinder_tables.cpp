#include "internal/unwinder_tables.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace ompdbg::tracer::detail {

namespace {

// DWARF exception-header pointer encodings (LSB "DW_EH_PE_*").
constexpr std::uint8_t pe_omit = 0xff;
constexpr std::uint8_t pe_datarel_sdata4 = 0x3b;

/// Size in bytes of a value with pointer encoding `enc`; 0 for variable-size / unknown.
std::size_t encoded_size(std::uint8_t enc) {
    switch (enc & 0x0f) {
    case 0x00: return 8;   // absptr
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    default: return 0;     // uleb/sleb: not used by real .eh_frame_hdr tables
    }
}

std::uint64_t decode_unsigned(const std::byte* p, std::size_t size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, size);   // little-endian host and target
    return v;
}

class fd_guard {
public:
    explicit fd_guard(int fd) : fd_(fd) {}
    ~fd_guard() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

}  // namespace

bool unwind_table::contains(std::uint64_t addr) const {
    return std::any_of(load_ranges.begin(), load_ranges.end(),
                       [&](auto& r) { return addr >= r.first && addr < r.second; });
}

bool unwind_table::is_executable(std::uint64_t addr) const {
    return std::any_of(exec_ranges.begin(), exec_ranges.end(),
                       [&](auto& r) { return addr >= r.first && addr < r.second; });
}

std::uint64_t unwind_table::exec_start() const {
    std::uint64_t v = ~0ULL;
    for (auto& r : exec_ranges) {
        v = std::min(v, r.first);
    }
    return exec_ranges.empty() ? 0 : v;
}

std::uint64_t unwind_table::exec_end() const {
    std::uint64_t v = 0;
    for (auto& r : exec_ranges) {
        v = std::max(v, r.second);
    }
    return v;
}

std::optional<unwind_table> read_unwind_table(const image_reader& read, std::uint64_t bias) {
    auto ehdr_bytes = read(0, sizeof(Elf64_Ehdr));
    if (!ehdr_bytes) {
        return std::nullopt;
    }
    Elf64_Ehdr ehdr;
    std::memcpy(&ehdr, ehdr_bytes->data(), sizeof ehdr);
    if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
        ehdr.e_ident[EI_DATA] != ELFDATA2LSB || ehdr.e_machine != EM_X86_64 ||
        ehdr.e_phentsize != sizeof(Elf64_Phdr) || ehdr.e_phnum == 0 || ehdr.e_phnum > 4096) {
        return std::nullopt;
    }
    auto ph_bytes = read(ehdr.e_phoff, std::size_t(ehdr.e_phnum) * sizeof(Elf64_Phdr));
    if (!ph_bytes) {
        return std::nullopt;
    }
    std::vector<Elf64_Phdr> phdrs(ehdr.e_phnum);
    std::memcpy(phdrs.data(), ph_bytes->data(), phdrs.size() * sizeof(Elf64_Phdr));

    unwind_table t;
    const Elf64_Phdr* eh = nullptr;
    for (auto& ph : phdrs) {
        if (ph.p_type == PT_LOAD && ph.p_memsz > 0) {
            std::pair range{ph.p_vaddr + bias, ph.p_vaddr + ph.p_memsz + bias};
            t.load_ranges.push_back(range);
            if (ph.p_flags & PF_X) {
                t.exec_ranges.push_back(range);
            }
        } else if (ph.p_type == PT_GNU_EH_FRAME) {
            eh = &ph;
        }
    }
    if (t.load_ranges.empty()) {
        return std::nullopt;
    }
    if (!eh || eh->p_filesz < 12) {
        return t;   // no search table: libunwind's and our frame-pointer fallbacks apply
    }
    auto hdr = read(eh->p_offset, 4);
    if (!hdr) {
        return t;
    }
    auto version = std::to_integer<std::uint8_t>((*hdr)[0]);
    auto ptr_enc = std::to_integer<std::uint8_t>((*hdr)[1]);
    auto count_enc = std::to_integer<std::uint8_t>((*hdr)[2]);
    auto table_enc = std::to_integer<std::uint8_t>((*hdr)[3]);
    std::size_t ptr_size = encoded_size(ptr_enc);
    std::size_t count_size = encoded_size(count_enc);
    // libunwind's remote binary search understands only the table encoding every
    // toolchain emits (datarel|sdata4); anything else falls back to frame pointers.
    if (version != 1 || count_enc == pe_omit || table_enc != pe_datarel_sdata4 || ptr_size == 0 ||
        count_size == 0) {
        return t;
    }
    auto count = read(eh->p_offset + 4 + ptr_size, count_size);
    if (!count) {
        return t;
    }
    std::uint64_t fde_count = decode_unsigned(count->data(), count_size);
    std::uint64_t table_off = 4 + ptr_size + count_size;
    if (fde_count == 0 || table_off + fde_count * 8 > eh->p_filesz) {
        return t;
    }
    t.eh_frame_hdr = eh->p_vaddr + bias;
    t.table_data = t.eh_frame_hdr + table_off;
    t.fde_count = fde_count;
    return t;
}

std::optional<unwind_table> read_unwind_table(const std::filesystem::path& path,
                                              std::uint64_t bias) {
    fd_guard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        return std::nullopt;
    }
    auto reader = [&](std::uint64_t offset,
                      std::size_t size) -> std::optional<std::vector<std::byte>> {
        std::vector<std::byte> buf(size);
        ssize_t n = ::pread(fd.get(), buf.data(), size, static_cast<off_t>(offset));
        if (n < 0 || static_cast<std::size_t>(n) != size) {
            return std::nullopt;
        }
        return buf;
    };
    return read_unwind_table(reader, bias);
}

std::optional<unwind_table> read_unwind_table_image(std::span<const std::byte> image,
                                                    std::uint64_t runtime_start) {
    auto reader = [&](std::uint64_t offset,
                      std::size_t size) -> std::optional<std::vector<std::byte>> {
        if (offset > image.size() || size > image.size() - offset) {
            return std::nullopt;
        }
        return std::vector<std::byte>(image.begin() + static_cast<std::ptrdiff_t>(offset),
                                      image.begin() + static_cast<std::ptrdiff_t>(offset + size));
    };
    // The bias is the run-time start minus the first PT_LOAD's page-aligned vaddr; read the
    // table once with bias 0 to find it.
    auto probe = read_unwind_table(reader, 0);
    if (!probe) {
        return std::nullopt;
    }
    std::uint64_t first = ~0ULL;
    for (auto& r : probe->load_ranges) {
        first = std::min(first, r.first);
    }
    return read_unwind_table(reader, runtime_start - (first & ~0xfffULL));
}

}  // namespace ompdbg::tracer::detail
