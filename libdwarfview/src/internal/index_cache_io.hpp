#pragma once
// The index cache's files (see ompdbg/dwarf/index_cache.hpp): one unit_names table per file
// holding DWARF and one symbol_names table per file with symbol tables, named by its
// build-id, read and written whole.

#include "internal/symbol_names.hpp"
#include "internal/unit_names.hpp"

#include <optional>
#include <string_view>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

struct cached_unit_names {
    /// What a table of this file must be valid for; nullopt when the cache is off or the
    /// file has no build-id (then nothing is read or written).
    std::optional<unit_names_key> key;
    /// The table read from the cache (a hit); nullopt on a miss.
    std::optional<unit_names> table;
};

/// Looks `dwarf`'s table up in the cache and counts a hit or a miss. Never throws; a file
/// that is not an intact table for this key is a miss (and is rewritten by the store).
cached_unit_names load_unit_names(Dwarf* dwarf);

/// Whether the cached table of the DWARF in `elf` (whose DWARF is not opened yet) names a
/// unit that may hold a function `leaf`: false lets a lookup skip opening that DWARF (libc's,
/// for a name it lacks). nullopt when the cache has no intact table for it (nothing counted:
/// opening the DWARF then counts the miss). A table read here is counted as a hit and kept
/// for the load_unit_names of the same file, which then reads and counts nothing.
std::optional<bool> unit_names_may_name(Elf* elf, std::string_view leaf);

/// Writes `table` for `key` into the cache (after a miss), keeping the directory under its
/// bound. A failure is kept for index_cache::problem(), nothing else.
void store_unit_names(const unit_names& table, const unit_names_key& key);

/// The symbol-name table of `key` from the cache, counting a hit; nullopt when it is not
/// there or not intact, the cache is off or the file has no build-id. Never throws.
std::optional<symbol_names> load_symbol_names(const symbol_names_key& key);

/// Counts the miss of a table that was built and writes it for `key` into the cache as
/// store_unit_names does; nothing when the cache is off or the file has no build-id.
void store_symbol_names(const symbol_names& table, const symbol_names_key& key);

}  // namespace ompdbg::dwarf::internal
