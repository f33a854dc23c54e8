#include "internal/unit_names.hpp"

#include "internal/unit_filter.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <zlib.h>

namespace ompdbg::dwarf::internal {

namespace {

// The layout of the bytes (little-endian, as the machine that reads them):
//   0 magic "OMPDBGNX"            8 u32 version          12 u32 zero
//  16 u64 size of the bytes      24 u32 crc32 of every byte but these four
//  28 u32 build-id size          32 u64 .debug_info, .debug_abbrev, .debug_str, .debug_line_str sizes
//  64 u32 units, always, keys, postings                  80 u64 zero
//  88 build-id (padded to 8), then the u64 unit DIE offsets, the u32 indexes of the units
//     that could not be read, the keys (u64 hash, u32 first posting, u32 postings) by
//     increasing hash, and the u32 unit indexes of the postings.
constexpr char magic[8] = {'O', 'M', 'P', 'D', 'B', 'G', 'N', 'X'};
constexpr std::size_t header_size = 88;
constexpr std::size_t crc_at = 24;

void put32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put64(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

std::uint32_t checksum(const unsigned char* b, std::size_t size) {
    uLong crc = crc32_z(0, b, crc_at);
    return static_cast<std::uint32_t>(crc32_z(crc, b + crc_at + 4, size - crc_at - 4));
}

std::size_t padded(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// The header of a table of these counts, checksum left for finish().
std::vector<unsigned char> start_bytes(const unit_names_key& key, std::size_t units, std::size_t always,
                                       std::size_t keys, std::size_t postings) {
    std::size_t size = header_size + padded(key.build_id.size()) + units * 8 + always * 4 + keys * 16 + postings * 4;
    std::vector<unsigned char> b(size, 0);
    std::memcpy(b.data(), magic, sizeof magic);
    put32(b, 8, unit_names::format_version);
    put64(b, 16, size);
    put32(b, 28, static_cast<std::uint32_t>(key.build_id.size()));
    put64(b, 32, key.info_size);
    put64(b, 40, key.abbrev_size);
    put64(b, 48, key.str_size);
    put64(b, 56, key.line_str_size);
    put32(b, 64, static_cast<std::uint32_t>(units));
    put32(b, 68, static_cast<std::uint32_t>(always));
    put32(b, 72, static_cast<std::uint32_t>(keys));
    put32(b, 76, static_cast<std::uint32_t>(postings));
    std::memcpy(b.data() + header_size, key.build_id.data(), key.build_id.size());
    return b;
}

// Slot numbers by string offset: open addressing with linear probing in one array (a C++
// program's hundreds of thousands of names; std::unordered_map's node per entry was most
// of the build). Offsets are never 0 here (the tag of their section is in the high half).
class offset_slots {
public:
    explicit offset_slots(std::size_t expected) {
        std::size_t n = 1024;
        while (n < expected * 2) {
            n *= 2;
        }
        cells_.assign(n, cell{});
    }
    /// The slot of `where`, or `next` (then recorded) when it has none yet.
    std::uint32_t find_or_add(std::uint64_t where, std::uint32_t next) {
        if (used_ * 2 >= cells_.size()) {
            grow();
        }
        for (std::size_t i = index(where);; i = (i + 1) & (cells_.size() - 1)) {
            if (cells_[i].where == where) {
                return cells_[i].slot;
            }
            if (cells_[i].where == 0) {
                cells_[i] = cell{where, next};
                ++used_;
                return next;
            }
        }
    }

private:
    struct cell {
        std::uint64_t where = 0;
        std::uint32_t slot = 0;
    };
    std::size_t index(std::uint64_t where) const {
        return static_cast<std::size_t>((where * 0x9e3779b97f4a7c15ull) >> 20) & (cells_.size() - 1);
    }
    void grow() {
        std::vector<cell> old(cells_.size() * 2);
        old.swap(cells_);
        for (const cell& c : old) {
            if (c.where != 0) {
                std::size_t i = index(c.where);
                while (cells_[i].where != 0) {
                    i = (i + 1) & (cells_.size() - 1);
                }
                cells_[i] = c;
            }
        }
    }
    std::vector<cell> cells_;
    std::size_t used_ = 0;
};

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void finish(std::vector<unsigned char>& b) { put32(b, crc_at, checksum(b.data(), b.size())); }

}  // namespace

std::optional<unit_names_key> unit_names_key::of(Dwarf* dwarf) {
    return of_elf(dwarf != nullptr ? dwarf_getelf(dwarf) : nullptr);
}

std::optional<unit_names_key> unit_names_key::of_elf(Elf* elf) {
    const void* id = nullptr;
    ssize_t n = elf != nullptr ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    std::size_t shstrndx = 0;
    if (n <= 0 || n > 64 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        return std::nullopt;
    }
    unit_names_key key;
    key.build_id.assign(static_cast<const char*>(id), static_cast<std::size_t>(n));
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) {
            continue;
        }
        const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
        std::string_view s = name != nullptr ? name : "";
        for (auto [want, to] : {std::pair{".debug_info", &key.info_size}, std::pair{".debug_abbrev", &key.abbrev_size},
                                std::pair{".debug_str", &key.str_size},
                                std::pair{".debug_line_str", &key.line_str_size}}) {
            if (s != want) {
                continue;
            }
            *to = shdr.sh_size;
            // Still compressed (the DWARF not opened yet): the size it inflates to, which
            // is what sh_size says once inflated.
            if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
                Elf_Data* raw = elf_rawdata(scn, nullptr);
                Elf64_Chdr chdr;
                if (raw == nullptr || raw->d_buf == nullptr || raw->d_size < sizeof chdr) {
                    return std::nullopt;
                }
                std::memcpy(&chdr, raw->d_buf, sizeof chdr);
                *to = chdr.ch_size;
            }
        }
    }
    return key;
}

std::uint64_t unit_names::hash(std::string_view spelling) {
    // Eight bytes a step (names of C++ templates run to hundreds of bytes), the length in
    // the seed so that trailing zero bytes count.
    std::uint64_t h = mix(0x243f6a8885a308d3ull ^ spelling.size());
    std::size_t i = 0;
    for (; i + 8 <= spelling.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, spelling.data() + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, spelling.data() + i, spelling.size() - i);
    return mix(h ^ tail);
}

std::optional<unit_names> unit_names::build(const unit_filter& filter, const unit_names_key& key) {
    constexpr std::size_t limit = std::numeric_limits<std::uint32_t>::max();
    const std::size_t units = filter.unit_count();
    if (units >= limit) {
        return std::nullopt;
    }
    // 1. Each distinct string naming a subprogram (a "slot": one .debug_str offset names
    //    the same function in every unit that declares it) and the units naming it, in
    //    unit order, without hashing a string more than once.
    offset_slots slot_of_offset(units * 64);
    std::unordered_map<std::string_view, std::uint32_t> slot_of_text;   // inline names
    std::vector<unit_filter::spelling> slots;
    std::vector<std::uint32_t> last_unit;                       // per slot: 1 + the last unit naming it
    std::vector<std::pair<std::uint32_t, std::uint32_t>> named; // (slot, unit)
    std::vector<std::uint32_t> always;
    std::vector<unit_filter::spelling> found;
    for (std::size_t u = 0; u < units; ++u) {
        found.clear();
        if (!filter.subprogram_names(u, found)) {
            always.push_back(static_cast<std::uint32_t>(u));
            continue;
        }
        for (const auto& sp : found) {
            const auto next = static_cast<std::uint32_t>(slots.size());
            const std::uint32_t slot = sp.where != 0 ? slot_of_offset.find_or_add(sp.where, next)
                                                     : slot_of_text.try_emplace(sp.text, next).first->second;
            if (slot == next) {
                slots.push_back(sp);
                last_unit.push_back(0);
            }
            if (last_unit[slot] != u + 1) {
                last_unit[slot] = static_cast<std::uint32_t>(u + 1);
                named.emplace_back(slot, static_cast<std::uint32_t>(u));
            }
        }
    }
    // The units of each slot, contiguous (a counting sort keeps them in unit order).
    std::vector<std::size_t> start(slots.size() + 1, 0);
    for (const auto& [slot, u] : named) {
        ++start[slot + 1];
    }
    for (std::size_t k = 0; k < slots.size(); ++k) {
        start[k + 1] += start[k];
    }
    std::vector<std::uint32_t> units_of(named.size());
    {
        std::vector<std::size_t> at(start.begin(), start.end() - 1);
        for (const auto& [slot, u] : named) {
            units_of[at[slot]++] = u;
        }
    }
    // 2. Every spelling a lookup may use for each slot's string, hashed.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> spelled;   // (hash, slot)
    for (std::size_t k = 0; k < slots.size(); ++k) {
        std::optional<std::string_view> text =
            slots[k].where != 0 ? filter.string_at(slots[k].where) : std::optional(slots[k].text);
        if (!text) {
            always.insert(always.end(), units_of.begin() + start[k], units_of.begin() + start[k + 1]);
            continue;
        }
        if (text->empty()) {
            continue;
        }
        spelled.emplace_back(hash(*text), static_cast<std::uint32_t>(k));
        // Mangled linkage names hold no '<'; template instances' names do.
        for (std::size_t i = text->find('<', 1); i != std::string_view::npos; i = text->find('<', i + 1)) {
            spelled.emplace_back(hash(text->substr(0, i)), static_cast<std::uint32_t>(k));
        }
    }
    std::sort(spelled.begin(), spelled.end());
    std::sort(always.begin(), always.end());
    always.erase(std::unique(always.begin(), always.end()), always.end());
    // 3. One key per hash, with the union of its slots' units.
    std::vector<key_entry> keys;
    std::vector<std::uint32_t> postings;
    std::vector<std::uint32_t> merged;
    for (std::size_t i = 0; i < spelled.size();) {
        std::size_t j = i;
        merged.clear();
        for (; j < spelled.size() && spelled[j].first == spelled[i].first; ++j) {
            const std::uint32_t k = spelled[j].second;
            merged.insert(merged.end(), units_of.begin() + start[k], units_of.begin() + start[k + 1]);
        }
        if (j - i > 1) {
            std::sort(merged.begin(), merged.end());
            merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
        }
        if (postings.size() + merged.size() >= limit) {
            return std::nullopt;
        }
        keys.push_back(key_entry{spelled[i].first, static_cast<std::uint32_t>(postings.size()),
                                 static_cast<std::uint32_t>(merged.size())});
        postings.insert(postings.end(), merged.begin(), merged.end());
        i = j;
    }
    if (keys.size() >= limit) {
        return std::nullopt;
    }

    unit_names t;
    t.bytes_ = start_bytes(key, units, always.size(), keys.size(), postings.size());
    if (!t.place()) {
        return std::nullopt;
    }
    std::vector<unsigned char>& b = t.bytes_.building();
    for (std::size_t u = 0; u < units; ++u) {
        put64(b, t.units_ + u * 8, filter.unit_die(u));
    }
    for (std::size_t k = 0; k < always.size(); ++k) {
        put32(b, t.always_ + k * 4, always[k]);
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
        put64(b, t.keys_ + k * 16, keys[k].hash);
        put32(b, t.keys_ + k * 16 + 8, keys[k].first);
        put32(b, t.keys_ + k * 16 + 12, keys[k].count);
    }
    if (!postings.empty()) {
        std::memcpy(b.data() + t.postings_, postings.data(), postings.size() * 4);
    }
    finish(b);
    return t;
}

bool unit_names::place() {
    if (size() < header_size) {
        return false;
    }
    unit_count_ = u32_at(64);
    always_count_ = u32_at(68);
    key_count_ = u32_at(72);
    posting_count_ = u32_at(76);
    // Counts are below 2^32 each: these sums cannot overflow a 64-bit size_t.
    std::size_t at = header_size + padded(u32_at(28));
    units_ = at;
    at += unit_count_ * 8;
    always_ = at;
    at += always_count_ * 4;
    keys_ = at;
    at += key_count_ * 16;
    postings_ = at;
    at += posting_count_ * 4;
    return at == size();
}

std::optional<unit_names> unit_names::parse(table_bytes bytes, const unit_names_key& key) {
    unit_names t;
    t.bytes_ = std::move(bytes);
    return checked(std::move(t), key);
}

std::optional<unit_names> unit_names::checked(unit_names t, const unit_names_key& key) {
    const unsigned char* b = t.base();
    const std::size_t size = t.size();
    if (size < header_size || std::memcmp(b, magic, sizeof magic) != 0 || t.u32_at(8) != format_version ||
        t.u64_at(16) != size || t.u64_at(80) != 0 || t.u32_at(12) != 0 || !t.place() ||
        t.u32_at(crc_at) != checksum(b, size)) {
        return std::nullopt;
    }
    unit_names_key found;
    found.build_id.assign(reinterpret_cast<const char*>(b + header_size), t.u32_at(28));
    found.info_size = t.u64_at(32);
    found.abbrev_size = t.u64_at(40);
    found.str_size = t.u64_at(48);
    found.line_str_size = t.u64_at(56);
    if (!(found == key)) {
        return std::nullopt;
    }
    // The parts: unit DIEs inside .debug_info and increasing, indexes below the unit count,
    // hashes increasing, postings inside their array. A table that
    // passed the checksum was written by us; these guard against our own bugs and against
    // a file of the same checksum by chance. Straight loops over raw words without a
    // branch per word: they run over every part of the table (libc's 182 KB) at each warm
    // session's first lookup (a call and a branch per word were half of its 112 us).
    auto w32 = [](const unsigned char* p) {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    };
    auto w64 = [](const unsigned char* p) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
    };
    bool ok = true;
    const unsigned char* units = b + t.units_;
    for (std::size_t u = 0; u < t.unit_count_; ++u) {
        const std::uint64_t off = w64(units + u * 8);
        ok &= (off < key.info_size) & (u == 0 || off > w64(units + (u - 1) * 8));
    }
    const std::uint32_t unit_count = static_cast<std::uint32_t>(t.unit_count_);
    for (std::size_t k = 0; k < t.always_count_; ++k) {
        ok &= w32(b + t.always_ + k * 4) < unit_count;
    }
    for (std::size_t k = 0; k < t.posting_count_; ++k) {
        ok &= w32(b + t.postings_ + k * 4) < unit_count;
    }
    const unsigned char* keys = b + t.keys_;
    for (std::size_t i = 0; i < t.key_count_; ++i) {
        const unsigned char* e = keys + i * 16;
        ok &= (std::uint64_t{w32(e + 8)} + w32(e + 12) <= t.posting_count_) & (i == 0 || w64(e) > w64(e - 16));
    }
    if (!ok) {
        return std::nullopt;
    }
    return t;
}

std::uint32_t unit_names::u32_at(std::size_t offset) const {
    std::uint32_t v;
    std::memcpy(&v, base() + offset, 4);
    return v;
}

std::uint64_t unit_names::u64_at(std::size_t offset) const {
    std::uint64_t v;
    std::memcpy(&v, base() + offset, 8);
    return v;
}

unit_names::key_entry unit_names::entry(std::size_t i) const {
    const std::size_t e = keys_ + i * 16;
    return key_entry{u64_at(e), u32_at(e + 8), u32_at(e + 12)};
}

std::vector<Dwarf_Off> unit_names::candidates(std::string_view leaf) const {
    std::vector<bool> hit(unit_count_, false);
    for (std::size_t k = 0; k < always_count_; ++k) {
        hit[u32_at(always_ + k * 4)] = true;
    }
    const std::uint64_t h = hash(leaf);
    std::size_t lo = 0, hi = key_count_;
    while (lo < hi) {
        std::size_t mid = lo + (hi - lo) / 2;
        if (entry(mid).hash < h) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < key_count_) {
        key_entry e = entry(lo);
        for (std::uint32_t p = e.first; e.hash == h && p < e.first + e.count; ++p) {
            hit[u32_at(postings_ + std::size_t{p} * 4)] = true;
        }
    }
    std::vector<Dwarf_Off> out;
    for (std::size_t u = 0; u < unit_count_; ++u) {
        if (hit[u]) {
            out.push_back(u64_at(units_ + u * 8));
        }
    }
    return out;
}

}  // namespace ompdbg::dwarf::internal
