#include "internal/readonly_segments.hpp"

#include <algorithm>
#include <cstring>

#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::tracer::internal {

namespace {

constexpr std::uint64_t page_size = 4096;

}  // namespace

void readonly_segments::add(const loaded_module& m) {
    if (!m.elf || m.elf->has_text_relocations()) {
        return;
    }
    for (const auto& seg : m.elf->load_segments()) {
        if (seg.is_writable || seg.filesz == 0) {
            continue;
        }
        range r{seg.vaddr + m.load_bias, seg.vaddr + seg.filesz + m.load_bias, m.load_bias, m.elf};
        auto at = std::lower_bound(ranges_.begin(), ranges_.end(), r.start,
                                   [](const range& x, std::uint64_t a) { return x.start < a; });
        // Overlapping ranges would mean two modules claim one address: trust neither there.
        bool overlaps = (at != ranges_.end() && at->start < r.end) || (at != ranges_.begin() && std::prev(at)->end > r.start);
        if (!overlaps) {
            ranges_.insert(at, std::move(r));
        }
    }
}

void readonly_segments::note_write(std::uint64_t addr, std::size_t size) {
    for (std::uint64_t p = addr & ~(page_size - 1); p < addr + size; p += page_size) {
        written_pages_.insert(p);
    }
}

std::size_t readonly_segments::read(std::uint64_t addr, std::span<std::byte> out) const {
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                                  [](std::uint64_t a, const range& x) { return a < x.start; });
    if (after == ranges_.begin() || std::prev(after)->end <= addr) {
        return 0;
    }
    const range& r = *std::prev(after);
    std::size_t done = 0;
    // Page by page: a page the debugger wrote ends what the file may answer.
    while (done < out.size() && addr + done < r.end) {
        std::uint64_t a = addr + done;
        if (written_pages_.count(a & ~(page_size - 1))) {
            break;
        }
        std::size_t n = std::min<std::uint64_t>({out.size() - done, r.end - a, page_size - (a & (page_size - 1))});
        // From the section holding `a`: bytes between sections (padding) are not answered here.
        auto bytes = r.elf->read_bytes(a - r.bias, n);
        if (bytes.empty()) {
            break;  // memcpy from an empty vector's null data is undefined, even for 0 bytes
        }
        std::memcpy(out.data() + done, bytes.data(), bytes.size());
        done += bytes.size();
        if (bytes.size() < n) {
            break;
        }
    }
    return done;
}

}  // namespace ompdbg::tracer::internal
