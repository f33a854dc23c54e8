#include "ompdbg/dwarf/index_cache.hpp"

#include "ompdbg/base/cache_dir.hpp"
#include "ompdbg/base/log.hpp"

#include "internal/cache_files.hpp"
#include "internal/index_cache_io.hpp"

#include <atomic>
#include <map>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string_view>

#include <fmt/format.h>

namespace ompdbg::dwarf {

namespace fs = std::filesystem;

namespace {

struct cache_state {
    // OMPDBG_INDEX_CACHE=off: no cache (the "before" of the benchmarks); an absolute
    // directory: the cache's directory; else $XDG_CACHE_HOME/ompdbg/index-cache.
    cache_state() {
        const char* v = std::getenv("OMPDBG_INDEX_CACHE");
        std::string_view env = v != nullptr ? v : "";
        enabled = env != "off";
        if (env.starts_with("/")) {
            dir = fs::path(env);
        } else if (auto home = cache_home()) {
            dir = *home / "index-cache";
        }
    }
    std::mutex mutex;
    bool enabled = true;
    std::optional<fs::path> dir;
    std::optional<std::string> problem;
    std::atomic<unsigned> hits{0};
    std::atomic<unsigned> misses{0};
    /// Tables peek_unit_names read (and counted), by path, until the file's DWARF is opened
    /// and load_unit_names takes its table: one read and one hit for both.
    std::map<fs::path, std::pair<internal::unit_names_key, internal::unit_names>> peeked;
};

cache_state& state() {
    static cache_state s;
    return s;
}

// Tables are small (libc's: about a megabyte); a bigger file is not one of ours.
constexpr std::uint64_t max_table_size = std::uint64_t{1} << 30;

std::uint64_t directory_limit() { return internal::megabytes_from_env("OMPDBG_INDEX_CACHE_MAX_MB", 256); }

fs::path table_path(const fs::path& dir, const internal::unit_names_key& key) {
    std::string name;
    for (unsigned char c : key.build_id) {
        name += fmt::format("{:02x}", c);
    }
    return dir / (name + ".ompdbg-index");
}

fs::path symbols_path(const fs::path& dir, const internal::symbol_names_key& key) {
    return dir / (key.build_id + ".ompdbg-symbols");
}

// Counts a hit or a miss of the table at `p`, and says so in the log.
void count(bool hit, const fs::path& p) {
    ++(hit ? state().hits : state().misses);
    log::write(log::channel::dwarf, "index cache: {} {}", hit ? "hit" : "miss", p.string());
}

// The table of format Table at `p` for `key`, read in place, when the file is there and
// intact (a file that is not is ignored, and said so in the log).
template <class Table, class Key>
std::optional<Table> read_table(const fs::path& p, const Key& key) {
    auto file = internal::mapped_file::open(p, max_table_size);
    if (!file) {
        return std::nullopt;
    }
    std::optional<Table> table = Table::parse(std::move(*file), key);
    if (!table) {
        log::write(log::channel::dwarf, "index cache: {} is not an intact table, ignored", p.string());
    }
    return table;
}

// The directory of the cache when it is on.
std::optional<fs::path> active_directory() {
    std::lock_guard lock(state().mutex);
    if (!state().enabled || !state().dir) {
        return std::nullopt;
    }
    return state().dir;
}

// Writes `bytes` to `p` in `dir`, keeping the directory under its bound; a failure is kept
// for index_cache::problem().
void store_table(const fs::path& dir, const fs::path& p, std::span<const unsigned char> bytes) {
    if (auto failure = internal::write_file_atomically(p, bytes.data(), bytes.size())) {
        std::lock_guard lock(state().mutex);
        if (state().dir == dir) {
            state().problem = fmt::format("The index cache directory \"{}\" cannot be written: {}.", dir.string(),
                                          *failure);
        }
        log::write(log::channel::dwarf, "index cache: cannot write {}: {}", p.string(), *failure);
        return;
    }
    internal::evict_least_recent(dir, p, directory_limit());
}

}  // namespace

namespace index_cache {

void set_enabled(bool on) {
    std::lock_guard lock(state().mutex);
    state().enabled = on;
}

bool enabled() {
    std::lock_guard lock(state().mutex);
    return state().enabled;
}

void set_directory(fs::path dir) {
    std::lock_guard lock(state().mutex);
    state().dir = dir.empty() ? std::nullopt : std::optional(std::move(dir));
    state().problem.reset();   // a new directory: whether it can be written is not known yet
}

std::optional<fs::path> directory() {
    std::lock_guard lock(state().mutex);
    return state().dir;
}

statistics stats() { return statistics{state().hits.load(), state().misses.load()}; }

std::optional<std::string> problem() {
    std::lock_guard lock(state().mutex);
    return state().problem;
}

}  // namespace index_cache

namespace internal {

cached_unit_names load_unit_names(Dwarf* dwarf) {
    cached_unit_names out;
    std::optional<fs::path> dir = active_directory();
    if (!dir) {
        return out;
    }
    out.key = unit_names_key::of(dwarf);
    if (!out.key) {
        return out;
    }
    fs::path p = table_path(*dir, *out.key);
    {
        std::lock_guard lock(state().mutex);
        if (auto it = state().peeked.find(p); it != state().peeked.end()) {
            if (it->second.first == *out.key) {
                out.table = std::move(it->second.second);
            }
            state().peeked.erase(it);
            if (out.table) {
                return out;
            }
        }
    }
    out.table = read_table<unit_names>(p, *out.key);
    count(out.table.has_value(), p);
    return out;
}

std::optional<bool> unit_names_may_name(Elf* elf, std::string_view leaf) {
    std::optional<fs::path> dir = active_directory();
    std::optional<unit_names_key> key = dir ? unit_names_key::of_elf(elf) : std::nullopt;
    if (!key) {
        return std::nullopt;
    }
    fs::path p = table_path(*dir, *key);
    std::lock_guard lock(state().mutex);
    auto it = state().peeked.find(p);
    if (it == state().peeked.end() || !(it->second.first == *key)) {
        std::optional<unit_names> table = read_table<unit_names>(p, *key);
        if (!table) {
            return std::nullopt;   // the lookup that opens the DWARF counts the miss
        }
        count(true, p);
        it = state().peeked.insert_or_assign(p, std::pair{std::move(*key), std::move(*table)}).first;
    }
    return !it->second.second.candidates(leaf).empty();
}

void store_unit_names(const unit_names& table, const unit_names_key& key) {
    if (auto dir = active_directory()) {
        store_table(*dir, table_path(*dir, key), table.bytes());
    }
}

std::optional<symbol_names> load_symbol_names(const symbol_names_key& key) {
    std::optional<fs::path> dir = active_directory();
    if (!dir || key.build_id.empty()) {
        return std::nullopt;
    }
    fs::path p = symbols_path(*dir, key);
    std::optional<symbol_names> table = read_table<symbol_names>(p, key);
    if (table) {
        count(true, p);
    }
    return table;
}

// The miss is counted here, when the table is built: a lookup that the string tables
// answer without building one (a name no symbol has) leaves the next session a miss too.
void store_symbol_names(const symbol_names& table, const symbol_names_key& key) {
    if (auto dir = active_directory(); dir && !key.build_id.empty()) {
        fs::path p = symbols_path(*dir, key);
        count(false, p);
        store_table(*dir, p, table.bytes());
    }
}

}  // namespace internal

}  // namespace ompdbg::dwarf
