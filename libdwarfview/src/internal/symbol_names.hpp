#pragma once
// The hash table of a file's symbol names (symbol_name_index's, see symbol_tables.hpp) as
// bytes that are also the file the index cache keeps (index_cache_io.hpp): a later session
// reads it instead of hashing every name of libc's 10,000-entry .symtab again, and a name
// no symbol has is answered from the table alone, without touching the symbol tables.
//
// The table holds no text: a 32-bit hash and the position of each kept entry, grouped by
// bucket. A hash match is only a candidate that the caller checks against the entry's real
// name, so two names of one hash never give a wrong answer.
//
// parse() checks the counts, the sizes, the buckets' bounds, the key and the checksum
// before any lookup, and a lookup checks each position it reads: a truncated, corrupt or
// foreign file is refused, never read past its end.

#include "internal/cache_files.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::dwarf::internal {

class elf_handle;
struct symbol_table;

/// What a table is valid for: the file's build-id and where its symbol tables are (a
/// stripped copy, another build of the same build-id or another separate debug file has
/// other offsets, sizes or counts).
struct symbol_names_key {
    /// One symbol table and its string table, as read_symbol_tables found them.
    struct shape {
        std::uint64_t in_separate = 0;   ///< 1 when it is the separate debug file's
        std::uint64_t offset = 0, size = 0, count = 0, strings_offset = 0, strings_size = 0;
        bool operator==(const shape&) const = default;
    };
    std::string build_id;   ///< as elf_file::build_id (hex); empty: not to be cached
    std::vector<shape> tables;

    /// The key of `tables`, the symbol tables of the file opened as `main` whose build-id is
    /// `build_id` (empty when it has none).
    static symbol_names_key of(const std::vector<symbol_table>& tables, const elf_handle& main, std::string build_id);
    bool operator==(const symbol_names_key&) const = default;
};

class symbol_names {
public:
    /// Format of the bytes; a file of another version is ignored (and rewritten).
    static constexpr std::uint32_t format_version = 1;

    /// Hashes the name of every entry that `tables` keep (symbol_table::name_at); nullopt
    /// when they hold 2^32 entries or more (not a real file's).
    static std::optional<symbol_names> build(const std::vector<symbol_table>& tables, const symbol_names_key& key);
    /// The table held in `bytes` when they are a complete, intact table of this format for
    /// `key`; nullopt otherwise.
    /// A cache file read in place keeps its mapping in the table.
    static std::optional<symbol_names> parse(table_bytes bytes, const symbol_names_key& key);

    /// The bytes to write to disk (parse() reads them back).
    std::span<const unsigned char> bytes() const { return bytes_.span(); }
    /// The positions (entry i of table k is the sum of the counts of the tables before k,
    /// plus i) of the kept entries whose name hashes as `name` does, in the tables' order;
    /// always inside the tables (a position past them is passed over).
    std::vector<std::uint32_t> candidates(std::string_view name) const;
    /// How many entries the table holds.
    std::size_t entry_count() const { return entries_; }

    /// The hash a name is kept under (part of the format).
    static std::uint32_t hash(std::string_view name);

private:
    symbol_names() = default;
    /// The checks of parse() on the bytes this table holds.
    static std::optional<symbol_names> checked(symbol_names table, const symbol_names_key& key);
    /// Reads the header's counts and places the parts after it; false when they do not fit
    /// the bytes.
    bool place();
    std::uint32_t u32_at(std::size_t offset) const;
    const unsigned char* base() const { return bytes_.data(); }
    std::size_t size() const { return bytes_.size(); }

    table_bytes bytes_;
    std::uint32_t mask_ = 0;
    std::size_t entries_ = 0;
    std::size_t total_ = 0;       ///< entries of the tables: every position is below
    // Where each part starts in the bytes (offsets: a copy stays valid).
    std::size_t starts_ = 0;      ///< u32 per bucket and one more: bucket b is [starts[b], starts[b+1])
    std::size_t hashes_ = 0;      ///< u32 per entry
    std::size_t positions_ = 0;   ///< u32 per entry
};

}  // namespace ompdbg::dwarf::internal
