#pragma once
/// The index cache (gdb's `set index-cache`): the table of a file's function names and the
/// compile units that hold them, written once to a directory under the build-id of the
/// file holding the DWARF and read by later sessions, so that looking a function up in a
/// library that does not define it costs a binary search instead of a walk over the
/// library's units; and beside it the hash of the file's symbol names (its .symtab and
/// .dynsym, or its separate debug file's .symtab), so that a lookup by name (a breakpoint's
/// function, thread_db's variables) neither hashes libc's 10,000 names again nor touches
/// its symbol tables for a name they do not hold. On by default (gdb's is off): the tables
/// are what a session reads anyway.
///
/// Process-wide settings, read when a file's first function lookup happens. The initial
/// state comes from the environment: OMPDBG_INDEX_CACHE=off disables it, an absolute
/// directory replaces the default $XDG_CACHE_HOME/ompdbg/index-cache (or
/// ~/.cache/ompdbg/index-cache); OMPDBG_INDEX_CACHE_MAX_MB bounds the directory (default
/// 256, least recently used files go first).

#include <filesystem>
#include <optional>
#include <string>

namespace ompdbg::dwarf::index_cache {

void set_enabled(bool on);
bool enabled();

/// The directory the tables are read from and written to; nullopt when there is none
/// (no HOME and no XDG_CACHE_HOME, or an empty path set): then nothing is cached.
void set_directory(std::filesystem::path dir);
std::optional<std::filesystem::path> directory();

/// What this process did: a hit is a table (of function names or of symbol names) read
/// from the cache, a miss a table of a file with a build-id that was not there (or not
/// intact) and was built.
struct statistics {
    unsigned hits = 0;
    unsigned misses = 0;
};
statistics stats();

/// Why the last table could not be written (an unwritable directory), as one sentence;
/// nullopt when every write worked. Nothing else reports it.
std::optional<std::string> problem();

}  // namespace ompdbg::dwarf::index_cache
