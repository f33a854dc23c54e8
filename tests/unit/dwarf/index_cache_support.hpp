#pragma once
// The index cache tests' fixture: a temporary cache directory made the index cache's for a
// test's lifetime, and whole-file reads and writes to damage its tables.

#include "ompdbg/dwarf/index_cache.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <zlib.h>

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

/// The damaged forms of a table file (both formats have their version at byte 8 and their
/// checksum at 24): each written over the table of `bin` must be refused (a miss), answered
/// as the intact table answers and rewritten; the intact file is then a hit. `answers(bin,
/// names)` answers with a fresh reader; `other` is a program whose table is foreign.
template <class AnswersOf>
void check_damaged_tables_rewritten(const cache_guard& cache, const std::string& bin, const std::string& other,
                                    const std::vector<std::string>& names, std::size_t header_size,
                                    AnswersOf answers) {
    namespace index_cache = ompdbg::dwarf::index_cache;
    auto good_answers = answers(bin, names);   // writes the table
    REQUIRE(cache.files().size() == 1);
    const std::filesystem::path file = cache.files()[0];
    const std::string good = read_all(file);
    REQUIRE(good.size() > header_size);
    answers(other, {"main"});   // another program's table
    REQUIRE(cache.files().size() == 2);
    std::string foreign;
    for (const auto& p : cache.files()) {
        if (p != file) {
            foreign = read_all(p);
        }
    }
    REQUIRE(foreign != good);

    // Version 2 with a checksum that matches: only the version says no.
    std::string newer = good;
    newer[8] = 2;
    std::uint32_t crc = static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(newer.data()), 24));
    crc = static_cast<std::uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(newer.data()) + 28, newer.size() - 28));
    std::memcpy(newer.data() + 24, &crc, 4);
    std::string flipped = good;
    flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x10);
    const std::map<std::string, std::string> bad = {
        {"empty", ""},
        {"truncated", good.substr(0, good.size() / 2)},
        {"header only", good.substr(0, header_size)},
        {"one byte changed", flipped},
        {"another format version", newer},
        {"longer than its header says", good + std::string(16, '\0')},
        {"another program's table", foreign},
        {"not a table", std::string(4096, 'x')},
    };
    for (const auto& [what, bytes] : bad) {
        INFO(what);
        write_all(file, bytes);
        auto before = index_cache::stats();
        CHECK(answers(bin, names) == good_answers);
        CHECK(index_cache::stats().misses == before.misses + 1);
        CHECK(index_cache::stats().hits == before.hits);
        CHECK(read_all(file) == good);   // rewritten
    }
    auto before = index_cache::stats();
    CHECK(answers(bin, names) == good_answers);
    CHECK(index_cache::stats().hits == before.hits + 1);
}

}  // namespace ompdbg::test::dwarf
