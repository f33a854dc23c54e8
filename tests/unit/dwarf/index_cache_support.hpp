#pragma once
// The index cache tests' fixture: a temporary cache directory made the index cache's for a
// test's lifetime, and whole-file reads and writes to damage its tables.

#include "ompdbg/dwarf/index_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace ompdbg::test::dwarf {

/// A temporary cache directory, made the index cache's for the test's lifetime (the
/// settings are the process's: put back after).
struct cache_guard {
    std::filesystem::path dir;
    bool was_enabled = ompdbg::dwarf::index_cache::enabled();
    std::optional<std::filesystem::path> was_dir = ompdbg::dwarf::index_cache::directory();
    cache_guard() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ompdbg-index-cache-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        dir = tmpl;
        ompdbg::dwarf::index_cache::set_directory(dir / "cache");
        ompdbg::dwarf::index_cache::set_enabled(true);
    }
    ~cache_guard() {
        ompdbg::dwarf::index_cache::set_enabled(was_enabled);
        ompdbg::dwarf::index_cache::set_directory(was_dir.value_or(std::filesystem::path()));
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    cache_guard(const cache_guard&) = delete;
    cache_guard& operator=(const cache_guard&) = delete;
    std::vector<std::filesystem::path> files() const {
        std::vector<std::filesystem::path> out;
        std::error_code ec;
        for (std::filesystem::directory_iterator it(dir / "cache", ec), end; !ec && it != end; it.increment(ec)) {
            out.push_back(it->path());
        }
        return out;
    }
};

inline std::string read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_all(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace ompdbg::test::dwarf
