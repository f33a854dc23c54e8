// The symbol-name table of the index cache (internal/symbol_names.hpp): the table written by
// the first reader and read by the next answers find_symbols exactly as the whole symbol
// table does; a truncated, corrupt, foreign-version or foreign file is refused (a miss,
// rewritten), never a crash or a wrong answer; two names of one hash are told apart by the
// real name. Every test keeps the cache in a temporary directory it removes.

#include "elf_test_support.hpp"
#include "index_cache_support.hpp"

#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/index_cache.hpp"
#include "internal/elf_handle.hpp"
#include "internal/symbol_names.hpp"
#include "internal/symbol_tables.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>
#include <zlib.h>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
namespace index_cache = ompdbg::dwarf::index_cache;
namespace internal = ompdbg::dwarf::internal;
namespace fs = std::filesystem;

namespace {

std::string fields(const std::vector<ompdbg::dwarf::symbol>& syms) {
    std::string out;
    for (const auto& s : syms) {
        out += fmt::format("{} {:#x} {} {} {} {} {};", s.name, s.value, s.size, static_cast<int>(s.kind), s.is_global,
                           s.from_dynsym, static_cast<int>(s.section));
    }
    return out;
}

/// The answers of a fresh reader of `file` to every name (the last handle of an earlier
/// reader is gone: open() reads the file afresh).
std::map<std::string, std::string> answers(const std::string& file, const std::vector<std::string>& names) {
    auto f = elf_file::open(file);
    std::map<std::string, std::string> out;
    for (const auto& n : names) {
        out[n] = fields(f->find_symbols(n));
    }
    return out;
}

/// Every name of `file`'s symbols and a few no symbol has.
std::vector<std::string> names_of(const std::string& file) {
    std::set<std::string> names;
    auto all = elf_file::open(file);
    for (const auto& s : all->symbols()) {
        names.insert(s.name);
    }
    std::vector<std::string> out(names.begin(), names.end());
    for (std::string extra : {"no_such_symbol_anywhere", "f", "", "@", "main@@GLIBC_2.34", "malloc@GLIBC_2.2.5"}) {
        out.push_back(extra);
    }
    return out;
}

/// The answers of the whole symbol table (symbols() read first).
std::map<std::string, std::string> whole_answers(const std::string& file, const std::vector<std::string>& names) {
    auto f = elf_file::open(file);
    (void)f->symbols();
    std::map<std::string, std::string> out;
    for (const auto& n : names) {
        out[n] = fields(f->find_symbols(n));
    }
    return out;
}

/// The symbol tables of `file` itself (not those of a separate debug file) and their key.
struct tables_of {
    std::optional<internal::elf_handle> handle;
    std::vector<internal::symbol_table> tables;
    internal::symbol_names_key key;
    explicit tables_of(const std::string& file) {
        handle = internal::elf_handle::try_open(file);
        REQUIRE(handle);
        tables = internal::read_symbol_tables(*handle, false);
        key = internal::symbol_names_key::of(tables, *handle, elf_file::open(file)->build_id().value_or("none"));
    }
};

std::vector<std::string> system_libraries() {
    std::vector<std::string> out;
    for (const char* lib : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}) {
        if (fs::exists(lib)) {
            out.push_back(lib);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("symbol cache: a warm lookup finds what a cold one and the whole symbol table find", "[dwarf]") {
    std::vector<std::string> files = variants("dwarf_c");
    for (const auto& lib : system_libraries()) {
        files.push_back(lib);   // libc's .symtab is in its separate debug file with libc6-dbg
    }
    for (const auto& file : files) {
        INFO(file);
        cache_guard cache;
        auto names = names_of(file);
        auto whole = whole_answers(file, names);
        auto before = index_cache::stats();
        auto cold = answers(file, names);   // a miss: the table is built and written
        CHECK(index_cache::stats().misses == before.misses + 1);
        CHECK(index_cache::stats().hits == before.hits);
        REQUIRE(cache.files().size() == 1);
        auto id = elf_file::open(file)->build_id().value();
        CHECK(cache.files()[0].filename().string() == id + ".ompdbg-symbols");
        auto warm = answers(file, names);   // a hit: read back
        CHECK(index_cache::stats().hits == before.hits + 1);
        CHECK(index_cache::stats().misses == before.misses + 1);
        CHECK(cold == whole);
        CHECK(warm == whole);
        index_cache::set_enabled(false);
        CHECK(answers(file, names) == whole);
        CHECK(index_cache::stats().hits == before.hits + 1);
        CHECK(index_cache::stats().misses == before.misses + 1);
    }
}

TEST_CASE("symbol cache: a name no symbol has costs neither a miss nor a file on a cold cache", "[dwarf]") {
    const std::string bin = target("dwarf_c", "gcc", 5, 0);
    cache_guard cache;
    auto before = index_cache::stats();
    CHECK(answers(bin, {"no_such_symbol_anywhere"})["no_such_symbol_anywhere"].empty());
    CHECK(cache.files().empty());   // the string tables said no: nothing was hashed
    CHECK(index_cache::stats().misses == before.misses);
    CHECK(index_cache::stats().hits == before.hits);
}

TEST_CASE("symbol cache: a truncated, corrupt, foreign-version or foreign file is a miss and is rewritten",
          "[dwarf]") {
    const std::string bin = target("dwarf_c", "gcc", 5, 0);
    const std::string other = target("dwarf_c", "clang", 5, 0);
    cache_guard cache;
    check_damaged_tables_rewritten(cache, bin, other, names_of(bin), 48,
                                   [](const std::string& b, const std::vector<std::string>& n) { return answers(b, n); });
}

TEST_CASE("symbol cache: parse refuses damaged tables and other keys, and never reads past them", "[dwarf]") {
    // Random truncations and bit flips of a real table are refused (ASan/UBSan builds check
    // the reads); so are the table of another build-id and of other symbol tables.
    const std::string bin = target("dwarf_c", "gcc", 5, 0);
    tables_of t(bin);
    auto table = internal::symbol_names::build(t.tables, t.key);
    REQUIRE(table);
    REQUIRE(table->entry_count() > 10);
    const std::vector<unsigned char> good(table->bytes().begin(), table->bytes().end());
    std::mt19937 rng(14);
    for (int round = 0; round < 2000; ++round) {
        std::vector<unsigned char> bytes = good;
        if (round % 2 == 0) {
            bytes.resize(rng() % bytes.size());
        } else {
            bytes[rng() % bytes.size()] ^= static_cast<unsigned char>(1u << (rng() % 8));
        }
        CHECK_FALSE(internal::symbol_names::parse(bytes, t.key));
    }
    auto other_id = t.key;
    other_id.build_id.back() = other_id.build_id.back() == '0' ? '1' : '0';
    CHECK_FALSE(internal::symbol_names::parse(good, other_id));
    for (auto change : {&internal::symbol_names_key::shape::offset, &internal::symbol_names_key::shape::size,
                        &internal::symbol_names_key::shape::count, &internal::symbol_names_key::shape::strings_size}) {
        auto other = t.key;   // the same build-id, other tables: a stripped copy, another build
        other.tables.back().*change += 1;
        CHECK_FALSE(internal::symbol_names::parse(good, other));
    }
    auto fewer = t.key;
    fewer.tables.pop_back();
    CHECK_FALSE(internal::symbol_names::parse(good, fewer));
    auto same = internal::symbol_names::parse(good, t.key);
    REQUIRE(same);
    CHECK(same->candidates("main") == table->candidates("main"));
    CHECK(!same->candidates("main").empty());
}

TEST_CASE("symbol cache: a name with the hash of another symbol's name finds nothing, cold or warm", "[dwarf]") {
    // Names that are not symbols whose 32-bit hash is that of one of the file's names: the
    // table offers the entry and the real name turns it down.
    std::string file = system_libraries().empty() ? target("dwarf_c", "gcc", 5, 0) : system_libraries()[0];
    INFO(file);
    tables_of t(file);
    std::unordered_set<std::uint32_t> hashes;
    std::set<std::string> real;
    for (const auto& tab : t.tables) {
        for (std::size_t i = 1; i < tab.count; ++i) {
            if (auto n = tab.name_at(i); !n.empty()) {
                hashes.insert(internal::symbol_names::hash(n));
                real.insert(std::string(n));
            }
        }
    }
    std::vector<std::string> colliding;
    for (std::uint64_t i = 0; colliding.size() < 3 && i < 200'000'000; ++i) {
        std::string s = fmt::format("collide_{}", i);
        if (hashes.count(internal::symbol_names::hash(s)) != 0 && real.count(s) == 0) {
            colliding.push_back(s);
        }
    }
    REQUIRE(colliding.size() == 3);
    auto table = internal::symbol_names::build(t.tables, t.key);
    REQUIRE(table);
    internal::symbol_name_index index(t.tables, *table);
    cache_guard cache;
    for (const auto& s : colliding) {
        INFO(s);
        CHECK(!table->candidates(s).empty());
        CHECK(index.find(s).empty());
    }
    // Through elf_file: cold (the table built and written), then warm (read back).
    std::vector<std::string> asked = colliding;
    asked.push_back("main");
    auto whole = whole_answers(file, asked);
    auto cold = answers(file, asked);
    auto before = index_cache::stats();
    auto warm = answers(file, asked);
    CHECK(index_cache::stats().hits == before.hits + 1);
    for (const auto& s : colliding) {
        CHECK(cold[s].empty());
        CHECK(warm[s].empty());
    }
    CHECK(cold == whole);
    CHECK(warm == whole);
}
