// The size bound of the build-id cache of files fetched from other hosts (remote_files.hpp):
// without one it only grows, by a whole MPI library per new build seen on a host.
#include "ompdbg/tracer/remote_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

namespace fs = std::filesystem;

std::optional<std::uint64_t> parse_cache_limit(std::string_view text) {
    std::string t(text);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) {
        t.pop_back();
    }
    if (t == "unlimited") {
        return 0;
    }
    std::uint64_t scale = 1;
    if (!t.empty()) {
        switch (std::toupper(static_cast<unsigned char>(t.back()))) {
        case 'K': scale = 1ULL << 10; break;
        case 'M': scale = 1ULL << 20; break;
        case 'G': scale = 1ULL << 30; break;
        default: break;
        }
        if (scale != 1) {
            t.pop_back();
        }
    }
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); }) ||
        t.size() > 12) {
        return std::nullopt;
    }
    return std::stoull(t) * scale;
}

std::uint64_t build_id_cache_limit() {
    const char* v = std::getenv("OMPDBG_BUILD_ID_CACHE_LIMIT");
    if (v != nullptr && *v != '\0') {
        if (auto n = parse_cache_limit(v)) {
            return *n;
        }
        log::write(log::channel::ptrace, "OMPDBG_BUILD_ID_CACHE_LIMIT={}: not a size; {} bytes", v,
                   default_build_id_cache_limit);
    }
    return default_build_id_cache_limit;
}

std::vector<fs::path> prune_build_id_cache(const fs::path& dir, std::uint64_t limit, const fs::path& keep) {
    std::vector<fs::path> removed;
    if (limit == 0) {
        return removed;
    }
    struct entry {
        fs::path path;
        std::uint64_t size;
        struct timespec used;
    };
    auto earlier = [](const struct timespec& a, const struct timespec& b) {
        return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
    };
    std::vector<entry> entries;
    std::uint64_t total = 0;
    std::error_code ec;
    // Only the XX/REST files: a transfer's temporary file (".REST.XXXXXX") is another
    // session's, still being written.
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        const auto& p = it->path();
        if (it.depth() != 1 || p.filename().string().starts_with(".") || !it->is_regular_file(ec)) {
            continue;
        }
        struct stat st;
        if (::stat(p.c_str(), &st) == 0) {
            // Last used: the access time a cache hit sets (or a read of the file, where the
            // file system keeps access times), never before the file arrived.
            entries.push_back({p, static_cast<std::uint64_t>(st.st_size), std::max(st.st_atim, st.st_mtim, earlier)});
            total += static_cast<std::uint64_t>(st.st_size);
        }
    }
    if (total <= limit) {
        return removed;
    }
    std::sort(entries.begin(), entries.end(), [&](const entry& a, const entry& b) { return earlier(a.used, b.used); });
    for (const auto& e : entries) {
        if (total <= limit) {
            break;
        }
        if (e.path == keep || !fs::remove(e.path, ec)) {
            continue;   // the file just fetched stays, even alone past the limit
        }
        total -= e.size;
        removed.push_back(e.path);
        fs::remove(e.path.parent_path(), ec);   // only when empty
        log::write(log::channel::ptrace, "build-id cache past {} bytes: removed {}", limit, e.path.string());
    }
    return removed;
}

}  // namespace ompdbg::tracer
