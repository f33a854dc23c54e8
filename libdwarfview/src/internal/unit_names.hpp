#pragma once
// The names of a file's functions and the units that hold them: what unit_filter answers
// name by name (the units with a DW_TAG_subprogram named `leaf` or `leaf<...>`), read once
// for every name of the file, so that it can be kept on disk by the index cache
// (index_cache.hpp) and a later session answers with a binary search instead of walking
// the file's units (libc's 2,063 walked to prove that none holds a function `f`).
//
// A name is kept as a 64-bit hash of each spelling a lookup may use: the name itself and
// each of its prefixes that ends before a '<' (`twice<int>` is found as `twice`), so a
// lookup is one binary search and the table holds no text (a C++ program's mangled names
// are most of its .debug_str). Two spellings of one hash only make a unit a candidate that
// the per-unit index then finds nothing in: answers stay exact.
//
// The same bytes are the table in memory and the file on disk: parse() checks every count,
// offset and the checksum before any lookup, so a truncated, corrupt or foreign file is
// refused, never read past its end and never answers wrongly.

#include "internal/cache_files.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

class unit_filter;

/// What a table is valid for: the file holding the DWARF (its build-id) and the sizes of
/// the sections the table was read from (a stripped copy or another build of the same
/// build-id has other sizes).
struct unit_names_key {
    std::string build_id;   ///< raw bytes of the NT_GNU_BUILD_ID note
    std::uint64_t info_size = 0, abbrev_size = 0, str_size = 0, line_str_size = 0;

    /// The key of `dwarf`'s ELF file; nullopt without a build-id (no cache).
    static std::optional<unit_names_key> of(Dwarf* dwarf);
    /// The same key read from the ELF file holding the DWARF before libdw opens it (a
    /// compressed section counts with the size it inflates to).
    static std::optional<unit_names_key> of_elf(Elf* elf);
    bool operator==(const unit_names_key&) const = default;
};

class unit_names {
public:
    /// Format of the bytes; a file of another version is ignored (and rewritten).
    static constexpr std::uint32_t format_version = 1;

    /// Reads every unit of `filter` (which must be usable()); nullopt when the table would
    /// not fit the format (over 2^32 names or units).
    static std::optional<unit_names> build(const unit_filter& filter, const unit_names_key& key);
    /// The table held in `bytes` when they are a complete, intact table of this format for
    /// `key`; nullopt otherwise.
    /// A cache file read in place keeps its mapping in the table.
    static std::optional<unit_names> parse(table_bytes bytes, const unit_names_key& key);

    /// The bytes to write to disk (parse() reads them back).
    std::span<const unsigned char> bytes() const { return bytes_.span(); }
    /// unit_filter::candidates for this file: the compile-unit DIE offsets of the units with
    /// a subprogram named `leaf` or `leaf<...>` (and rarely one whose spelling has the same
    /// hash), and of those that could not be read, in file order.
    std::vector<Dwarf_Off> candidates(std::string_view leaf) const;
    std::size_t unit_count() const { return unit_count_; }
    /// How many spellings (hashes) the table holds.
    std::size_t key_count() const { return key_count_; }

    /// The hash a spelling is kept under (stable across builds and machines of the same
    /// byte order: it is part of the format).
    static std::uint64_t hash(std::string_view spelling);

private:
    struct key_entry {
        std::uint64_t hash;
        std::uint32_t first, count;
    };
    unit_names() = default;
    /// The checks of parse() on the bytes this table holds.
    static std::optional<unit_names> checked(unit_names table, const unit_names_key& key);
    const unsigned char* base() const { return bytes_.data(); }
    std::size_t size() const { return bytes_.size(); }
    /// Reads the counts of the header of the bytes and places the parts after it; false when
    /// they do not fit the bytes.
    bool place();
    key_entry entry(std::size_t i) const;
    std::uint32_t u32_at(std::size_t offset) const;
    std::uint64_t u64_at(std::size_t offset) const;

    table_bytes bytes_;
    std::size_t unit_count_ = 0, always_count_ = 0, key_count_ = 0, posting_count_ = 0;
    // Where each part starts in the bytes (offsets, not pointers: a copy stays valid).
    std::size_t units_ = 0;      ///< u64 DIE offsets, increasing
    std::size_t always_ = 0;     ///< u32 unit indexes
    std::size_t keys_ = 0;       ///< key_entry (16 bytes), increasing hashes
    std::size_t postings_ = 0;   ///< u32 unit indexes
};

}  // namespace ompdbg::dwarf::internal
