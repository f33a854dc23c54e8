#include "internal/symbol_names.hpp"

#include "internal/symbol_tables.hpp"
#include "internal/unit_names.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <zlib.h>

namespace ompdbg::dwarf::internal {

namespace {

// The layout of the bytes (little-endian, as the machine that reads them):
//   0 magic "OMPDBGSY"            8 u32 version          12 u32 symbol tables
//  16 u64 size of the bytes      24 u32 crc32 of every byte but these four
//  28 u32 build-id size          32 u32 buckets (a power of two)   36 u32 entries
//  40 u64 zero
//  48 build-id (padded to 8), then per symbol table six u64 (symbol_names_key::shape in
//     order), the u32 starts of the buckets (one more than buckets), the u32 hashes and
//     the u32 positions of the entries grouped by bucket, in the tables' order within one.
constexpr char magic[8] = {'O', 'M', 'P', 'D', 'B', 'G', 'S', 'Y'};
constexpr std::size_t header_size = 48;
constexpr std::size_t crc_at = 24;
constexpr std::size_t shape_size = 48;
constexpr std::size_t max_build_id = 256;
constexpr std::size_t max_tables = 16;

void put32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put64(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

std::uint32_t get32(const unsigned char* b, std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, b + at, 4);
    return v;
}

std::uint64_t get64(const unsigned char* b, std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, b + at, 8);
    return v;
}

std::uint32_t checksum(const unsigned char* b, std::size_t size) {
    uLong crc = crc32_z(0, b, crc_at);
    return static_cast<std::uint32_t>(crc32_z(crc, b + crc_at + 4, size - crc_at - 4));
}

std::size_t padded(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

std::size_t total_entries(const symbol_names_key& key) {
    std::size_t total = 0;
    for (const auto& t : key.tables) {
        total += static_cast<std::size_t>(t.count);
    }
    return total;
}

// Where the starts of the buckets begin, after the build-id and the shapes.
std::size_t starts_offset(std::size_t build_id_size, std::size_t tables) {
    return header_size + padded(build_id_size) + tables * shape_size;
}

}  // namespace

symbol_names_key symbol_names_key::of(const std::vector<symbol_table>& tables, const elf_handle& main,
                                      std::string build_id) {
    symbol_names_key key;
    key.build_id = std::move(build_id);
    for (const auto& t : tables) {
        key.tables.push_back(shape{t.file != &main ? 1u : 0u, t.offset, t.size, t.count, t.strings_offset,
                                   t.strings.size()});
    }
    return key;
}

std::uint32_t symbol_names::hash(std::string_view name) { return static_cast<std::uint32_t>(unit_names::hash(name)); }

std::optional<symbol_names> symbol_names::build(const std::vector<symbol_table>& tables, const symbol_names_key& key) {
    std::size_t total = 0;
    for (const auto& t : tables) {
        total += t.count;
    }
    if (total >= std::numeric_limits<std::uint32_t>::max() || key.build_id.size() > max_build_id ||
        key.tables.size() > max_tables || key.tables.size() != tables.size()) {
        return std::nullopt;
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> kept;   // (hash, position) in order
    kept.reserve(total);
    std::size_t first = 0;
    for (const auto& t : tables) {
        for (std::size_t i = 1; i < t.count; ++i) {
            std::string_view name = t.name_at(i);
            if (!name.empty()) {
                kept.emplace_back(hash(name), static_cast<std::uint32_t>(first + i));
            }
        }
        first += t.count;
    }
    std::size_t buckets = 1;
    while (buckets * 2 < kept.size()) {
        buckets <<= 1;
    }
    const std::size_t at_starts = starts_offset(key.build_id.size(), key.tables.size());
    const std::size_t size = at_starts + (buckets + 1) * 4 + kept.size() * 8;
    symbol_names out;
    std::vector<unsigned char>& b = out.bytes_.building();
    b.assign(size, 0);
    std::memcpy(b.data(), magic, sizeof magic);
    put32(b, 8, format_version);
    put32(b, 12, static_cast<std::uint32_t>(key.tables.size()));
    put64(b, 16, size);
    put32(b, 28, static_cast<std::uint32_t>(key.build_id.size()));
    put32(b, 32, static_cast<std::uint32_t>(buckets));
    put32(b, 36, static_cast<std::uint32_t>(kept.size()));
    std::memcpy(b.data() + header_size, key.build_id.data(), key.build_id.size());
    std::size_t at = header_size + padded(key.build_id.size());
    for (const auto& s : key.tables) {
        for (std::uint64_t v : {s.in_separate, s.offset, s.size, s.count, s.strings_offset, s.strings_size}) {
            put64(b, at, v);
            at += 8;
        }
    }
    // Counting sort by bucket: counts, their running sums, then each entry in order.
    const auto mask = static_cast<std::uint32_t>(buckets - 1);
    std::vector<std::uint32_t> starts(buckets + 1, 0);
    for (const auto& [h, pos] : kept) {
        ++starts[(h & mask) + 1];
    }
    for (std::size_t k = 0; k < buckets; ++k) {
        starts[k + 1] += starts[k];
    }
    std::memcpy(b.data() + at_starts, starts.data(), starts.size() * 4);
    const std::size_t at_hashes = at_starts + starts.size() * 4;
    const std::size_t at_positions = at_hashes + kept.size() * 4;
    for (const auto& [h, pos] : kept) {
        std::uint32_t slot = starts[h & mask]++;
        put32(b, at_hashes + std::size_t{slot} * 4, h);
        put32(b, at_positions + std::size_t{slot} * 4, pos);
    }
    put32(b, crc_at, checksum(b.data(), b.size()));
    if (!out.place()) {
        return std::nullopt;
    }
    out.total_ = total;
    return out;
}

std::optional<symbol_names> symbol_names::parse(table_bytes bytes, const symbol_names_key& key) {
    symbol_names table;
    table.bytes_ = std::move(bytes);
    return checked(std::move(table), key);
}

std::optional<symbol_names> symbol_names::checked(symbol_names out, const symbol_names_key& key) {
    const unsigned char* bytes = out.base();
    const std::size_t size = out.size();
    if (size < header_size || std::memcmp(bytes, magic, sizeof magic) != 0 || get32(bytes, 8) != format_version ||
        get64(bytes, 16) != size || get64(bytes, 40) != 0 || get32(bytes, 28) != key.build_id.size() ||
        get32(bytes, 12) != key.tables.size() || key.build_id.size() > max_build_id ||
        key.tables.size() > max_tables || size < starts_offset(key.build_id.size(), key.tables.size())) {
        return std::nullopt;
    }
    if (get32(bytes, crc_at) != checksum(bytes, size) ||
        std::memcmp(bytes + header_size, key.build_id.data(), key.build_id.size()) != 0) {
        return std::nullopt;
    }
    std::size_t at = header_size + padded(key.build_id.size());
    for (const auto& s : key.tables) {
        for (std::uint64_t v : {s.in_separate, s.offset, s.size, s.count, s.strings_offset, s.strings_size}) {
            if (get64(bytes, at) != v) {
                return std::nullopt;
            }
            at += 8;
        }
    }
    if (!out.place()) {
        return std::nullopt;
    }
    // The buckets in order and within the entries. An entry's own words are checked where
    // a lookup reads them (candidates, find): its position inside the tables, else it is
    // passed over; a hash in the wrong bucket is never met. Checking the 13,000 entries of
    // libc here cost as much as the checksum and the read together.
    out.total_ = total_entries(key);
    const unsigned char* starts = bytes + out.starts_;
    auto word = [](const unsigned char* p) {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    };
    bool ok = word(starts) == 0 && word(starts + (std::size_t{out.mask_} + 1) * 4) == out.entries_;
    for (std::size_t bucket = 0; bucket <= out.mask_; ++bucket) {
        ok &= word(starts + bucket * 4) <= word(starts + bucket * 4 + 4);
    }
    if (!ok) {
        return std::nullopt;
    }
    return out;
}

bool symbol_names::place() {
    const std::size_t build_id_size = get32(base(), 28), tables = get32(base(), 12);
    const std::uint64_t buckets = get32(base(), 32), entries = get32(base(), 36);
    if (buckets == 0 || (buckets & (buckets - 1)) != 0 || build_id_size > max_build_id || tables > max_tables) {
        return false;
    }
    const std::size_t at_starts = starts_offset(build_id_size, tables);
    // Counts are 32-bit: the sum cannot wrap a 64-bit size.
    if (std::uint64_t{at_starts} + (buckets + 1) * 4 + entries * 8 != size()) {
        return false;
    }
    mask_ = static_cast<std::uint32_t>(buckets - 1);
    entries_ = static_cast<std::size_t>(entries);
    starts_ = at_starts;
    hashes_ = starts_ + static_cast<std::size_t>(buckets + 1) * 4;
    positions_ = hashes_ + entries_ * 4;
    return true;
}

std::uint32_t symbol_names::u32_at(std::size_t offset) const { return get32(base(), offset); }

std::vector<std::uint32_t> symbol_names::candidates(std::string_view name) const {
    std::vector<std::uint32_t> out;
    const std::uint32_t h = hash(name);
    const std::size_t bucket = h & mask_;
    for (std::uint32_t e = u32_at(starts_ + bucket * 4), end = u32_at(starts_ + bucket * 4 + 4); e < end; ++e) {
        if (u32_at(hashes_ + std::size_t{e} * 4) == h) {
            if (std::uint32_t pos = u32_at(positions_ + std::size_t{e} * 4); pos < total_) {
                out.push_back(pos);
            }
        }
    }
    // The tables' order (a table built here has it already).
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace ompdbg::dwarf::internal
