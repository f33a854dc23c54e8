#pragma once
// Byte-mutated copies of an ELF file for the robustness tests: a few bytes changed, chosen
// from a seed, mostly inside the sections a debugger parses (.debug_*, .symtab, .strtab,
// the section header table). The same seed always gives the same copy, so a failure names
// its seed and the changed bytes and can be replayed.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ompdbg::test {

/// One changed byte of a mutated copy.
struct byte_change {
    std::size_t offset;
    unsigned char value;
};

/// splitmix64: a tiny, fully specified generator (std::mt19937 would do too, but the
/// distributions of <random> are not the same on every standard library).
class seeded_random {
public:
    explicit seeded_random(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, n) (n > 0; the modulo bias is irrelevant here).
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

private:
    std::uint64_t state_;
};

/// [offset, offset + size) of the parts of a 64-bit little-endian ELF image worth mutating:
/// each .debug_* section, .symtab, .strtab, .dynsym, .dynstr, and the section header
/// table. Empty when the image is not such an ELF file.
inline std::vector<std::pair<std::size_t, std::size_t>> elf_mutation_regions(const std::vector<unsigned char>& elf) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    auto rd = [&](std::size_t off, std::size_t n) {
        std::uint64_t v = 0;
        if (off + n <= elf.size()) {
            std::memcpy(&v, elf.data() + off, n);
        }
        return v;
    };
    if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF\x02\x01", 6) != 0) {
        return out;
    }
    std::uint64_t shoff = rd(0x28, 8);
    std::uint64_t shentsize = rd(0x3a, 2), shnum = rd(0x3c, 2), shstrndx = rd(0x3e, 2);
    if (shentsize < 64 || shstrndx >= shnum || shoff + shnum * shentsize > elf.size()) {
        return out;
    }
    out.emplace_back(shoff, shnum * shentsize);
    std::uint64_t strtab = rd(shoff + shstrndx * shentsize + 0x18, 8);
    std::uint64_t strsize = rd(shoff + shstrndx * shentsize + 0x20, 8);
    for (std::uint64_t i = 0; i < shnum; ++i) {
        std::uint64_t h = shoff + i * shentsize;
        std::uint64_t name = rd(h, 4), off = rd(h + 0x18, 8), size = rd(h + 0x20, 8);
        std::uint32_t type = static_cast<std::uint32_t>(rd(h + 4, 4));
        if (name >= strsize || strtab + strsize > elf.size() || type == 8 /* SHT_NOBITS */ || size == 0 ||
            off + size > elf.size()) {
            continue;
        }
        std::string n(reinterpret_cast<const char*>(elf.data() + strtab + name),
                      strnlen(reinterpret_cast<const char*>(elf.data() + strtab + name), strsize - name));
        if (n.starts_with(".debug_") || n == ".symtab" || n == ".strtab" || n == ".dynsym" || n == ".dynstr") {
            out.emplace_back(off, size);
        }
    }
    return out;
}

/// The bytes seed `seed` changes in `elf`: 1 to 4 changes, each in a region picked
/// uniformly (so small sections such as .debug_abbrev are hit as often as .debug_info),
/// each a random byte, a flipped bit, or a boundary value (0x00, 0x7f, 0x80, 0xff).
inline std::vector<byte_change> plan_mutation(const std::vector<unsigned char>& elf, std::uint64_t seed) {
    auto regions = elf_mutation_regions(elf);
    if (regions.empty()) {
        regions.emplace_back(0, elf.size());
    }
    seeded_random rng(seed);
    std::vector<byte_change> out;
    std::size_t n = 1 + rng.below(4);
    for (std::size_t i = 0; i < n; ++i) {
        auto [start, size] = regions[rng.below(regions.size())];
        std::size_t at = start + rng.below(size);
        unsigned char v = elf[at];
        switch (rng.below(3)) {
            case 0: v = static_cast<unsigned char>(rng.next()); break;
            case 1: v ^= static_cast<unsigned char>(1u << rng.below(8)); break;
            default: {
                static constexpr unsigned char boundary[] = {0x00, 0x7f, 0x80, 0xff};
                v = boundary[rng.below(4)];
            }
        }
        out.push_back({at, v});
    }
    return out;
}

/// `elf` with `changes` applied.
inline std::vector<unsigned char> apply_mutation(std::vector<unsigned char> elf, const std::vector<byte_change>& changes) {
    for (auto c : changes) {
        elf[c.offset] = c.value;
    }
    return elf;
}

/// "0x1a2b=0xff 0x3c4d=0x00" for a failure message.
inline std::string describe_mutation(const std::vector<byte_change>& changes) {
    std::string out;
    for (auto c : changes) {
        out += fmt::format("{}{:#x}={:#04x}", out.empty() ? "" : " ", c.offset, c.value);
    }
    return out;
}

}  // namespace ompdbg::test
