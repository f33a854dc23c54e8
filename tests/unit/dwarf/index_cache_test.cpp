// The index cache (ompdbg/dwarf/index_cache.hpp): a file's table of function names written
// by the first reader and read by the next must give the lookups the whole index gives;
// a truncated, corrupt, foreign-version, wrong-size or foreign file is a miss (rewritten),
// never a crash or a wrong answer; nothing is written when the cache is off; a directory
// that cannot be written only shows in problem(). Every test keeps the cache in a
// temporary directory it removes.

#include "elf_test_support.hpp"
#include "index_cache_support.hpp"

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/index_cache.hpp"
#include "internal/unit_filter.hpp"
#include "internal/unit_names.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <fmt/format.h>
#include <zlib.h>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
namespace index_cache = ompdbg::dwarf::index_cache;
namespace fs = std::filesystem;

namespace {

/// What find_functions answers for `name` with a fresh reader, in a comparable form.
std::vector<std::string> functions_found(const ompdbg::dwarf::debug_info& d, const std::string& name) {
    std::vector<std::string> out;
    for (const auto& fn : d.find_functions(name)) {
        out.push_back(fmt::format("{} {:#x} {:#x} {}", fn.name, fn.entry_pc, fn.breakpoint_pc, fn.is_inlined));
    }
    return out;
}

// Names of the programs (every function the index knows, spellings a user types, names
// that are only parameters, members or types, and none at all).
const std::vector<std::string> spellings = {
    "main", "step", "shapes::twice", "twice", "twice<int>", "shapes::twice<double>", "shapes::box::area",
    "box::area", "area", "perimeter", "shapes::square", "only_b::helper", "helper", "a_work",
    "_ZNK6shapes3box4areaEv", "b_work(int)", "no_such_function", "x", "h", "box"};

/// The answers of a fresh reader of `bin` to every name: `names` and those of the index.
std::map<std::string, std::vector<std::string>> answers(const std::string& bin, const std::vector<std::string>& names) {
    auto f = elf_file::open(bin);
    REQUIRE(f->debug() != nullptr);
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& n : names) {
        out[n] = functions_found(*f->debug(), n);
    }
    return out;
}

/// Every name the whole index knows, and `spellings`.
std::vector<std::string> names_of(const std::string& bin) {
    std::vector<std::string> names = spellings;
    auto f = elf_file::open(bin);
    for (const auto& n : f->debug()->all_function_names()) {
        names.push_back(n);
    }
    return names;
}

}  // namespace

TEST_CASE("index cache: a warm lookup finds what a cold one and the whole index find, on gcc and clang programs",
          "[dwarf]") {
    auto bin = GENERATE(from_range([] {
        auto v = variants("dwarf_units");
        for (auto& x : variants("dwarf_cxx")) {
            v.push_back(x);
        }
        return v;
    }()));
    INFO(bin);
    cache_guard cache;
    auto names = names_of(bin);
    std::map<std::string, std::vector<std::string>> whole;
    {
        auto f = elf_file::open(bin);
        f->debug()->all_function_names();   // the whole index first: every lookup goes through it
        for (const auto& n : names) {
            whole[n] = functions_found(*f->debug(), n);
        }
    }
    CHECK(!whole["main"].empty());
    auto before = index_cache::stats();
    auto cold = answers(bin, names);   // a miss: the table is built and written
    CHECK(index_cache::stats().misses == before.misses + 1);
    CHECK(index_cache::stats().hits == before.hits);
    REQUIRE(cache.files().size() == 1);
    auto id = elf_file::open(bin)->build_id().value();
    CHECK(cache.files()[0].filename().string() == id + ".ompdbg-index");   // the build-id of the file with the DWARF
    auto warm = answers(bin, names);   // a hit: read back
    CHECK(index_cache::stats().hits == before.hits + 1);
    CHECK(index_cache::stats().misses == before.misses + 1);
    std::size_t found = 0;
    for (const auto& n : names) {
        INFO(n);
        CHECK(cold[n] == whole[n]);
        CHECK(warm[n] == whole[n]);
        found += whole[n].empty() ? 0 : 1;
    }
    CHECK(found >= 3);
    // Without the cache (unit_filter name by name), the same.
    index_cache::set_enabled(false);
    CHECK(answers(bin, names) == whole);
}

TEST_CASE("index cache: the table's candidates are the unit filter's for every name", "[dwarf]") {
    // The table is read from the same walk as unit_filter::candidates: for readable units
    // the two agree exactly, so the per-unit indexes built are the same.
    for (const auto& bin : variants("dwarf_units")) {
        INFO(bin);
        auto f = elf_file::open(bin);
        ompdbg::dwarf::internal::unit_filter filter(f->debug()->raw());
        REQUIRE(filter.usable());
        auto key = ompdbg::dwarf::internal::unit_names_key::of(f->debug()->raw());
        REQUIRE(key);
        auto table = ompdbg::dwarf::internal::unit_names::build(filter, *key);
        REQUIRE(table);
        auto back = ompdbg::dwarf::internal::unit_names::parse(table->bytes(), *key);
        REQUIRE(back);
        for (const auto& n : {"main", "step", "twice", "twice<int>", "area", "a_work", "helper", "x", "h", "box",
                              "no_such_function", "_ZNK6shapes3box4areaEv"}) {
            INFO(n);
            CHECK(table->candidates(n) == filter.candidates(n));
            CHECK(back->candidates(n) == filter.candidates(n));
        }
    }
}

TEST_CASE("index cache: a truncated, corrupt, foreign-version, wrong-size or foreign file is a miss and is rewritten",
          "[dwarf]") {
    const std::string bin = target("dwarf_units", "gcc", 5, 0);
    const std::string other = target("dwarf_cxx", "clang", 5, 0);
    cache_guard cache;
    check_damaged_tables_rewritten(cache, bin, other, names_of(bin), 88,
                                   [](const std::string& b, const std::vector<std::string>& n) { return answers(b, n); });
}

TEST_CASE("index cache: parse refuses damaged tables and never reads past them", "[dwarf]") {
    // Random truncations and bit flips of a real table: parse either refuses the bytes or
    // (unchanged bytes) gives the same answers; never a crash (ASan/UBSan builds check the
    // reads).
    const std::string bin = target("dwarf_cxx", "gcc", 5, 0);
    auto f = elf_file::open(bin);
    ompdbg::dwarf::internal::unit_filter filter(f->debug()->raw());
    REQUIRE(filter.usable());
    auto key = ompdbg::dwarf::internal::unit_names_key::of(f->debug()->raw());
    REQUIRE(key);
    auto table = ompdbg::dwarf::internal::unit_names::build(filter, *key);
    REQUIRE(table);
    const std::vector<unsigned char> good(table->bytes().begin(), table->bytes().end());
    std::mt19937 rng(21);
    for (int round = 0; round < 2000; ++round) {
        std::vector<unsigned char> bytes = good;
        if (round % 2 == 0) {
            bytes.resize(rng() % bytes.size());
        } else {
            bytes[rng() % bytes.size()] ^= static_cast<unsigned char>(1u << (rng() % 8));
        }
        auto parsed = ompdbg::dwarf::internal::unit_names::parse(bytes, *key);
        CHECK_FALSE(parsed);
    }
    auto other_key = *key;
    other_key.info_size += 1;   // the same build-id, other sections: a stripped copy, another build
    CHECK_FALSE(ompdbg::dwarf::internal::unit_names::parse(good, other_key));
    auto same = ompdbg::dwarf::internal::unit_names::parse(good, *key);
    REQUIRE(same);
    CHECK(same->candidates("main") == filter.candidates("main"));
}

TEST_CASE("index cache: nothing is written or counted when it is off", "[dwarf]") {
    const std::string bin = target("dwarf_units", "clang", 5, 0);
    cache_guard cache;
    index_cache::set_enabled(false);
    auto before = index_cache::stats();
    auto got = answers(bin, {"main", "step", "no_such_function"});
    CHECK(!got["main"].empty());
    CHECK(cache.files().empty());
    CHECK_FALSE(fs::exists(cache.dir / "cache"));
    CHECK(index_cache::stats().hits == before.hits);
    CHECK(index_cache::stats().misses == before.misses);
}

TEST_CASE("index cache: a directory that cannot be written gives the same answers and one sentence", "[dwarf]") {
    const std::string bin = target("dwarf_units", "gcc", 4, 0);
    cache_guard cache;
    write_all(cache.dir / "a-file", "not a directory\n");
    index_cache::set_directory(cache.dir / "a-file" / "cache");
    CHECK_FALSE(index_cache::problem());
    auto names = names_of(bin);
    auto got = answers(bin, names);
    CHECK(!got["main"].empty());
    auto why = index_cache::problem();
    REQUIRE(why);
    CHECK(*why == "The index cache directory \"" + (cache.dir / "a-file" / "cache").string() +
                      "\" cannot be written: Not a directory.");
    index_cache::set_enabled(false);
    CHECK(answers(bin, names) == got);
}

TEST_CASE("index cache: over OMPDBG_INDEX_CACHE_MAX_MB the least recently used tables go first", "[dwarf]") {
    cache_guard cache;
    ::setenv("OMPDBG_INDEX_CACHE_MAX_MB", "0", 1);
    struct unset_max {
        ~unset_max() { ::unsetenv("OMPDBG_INDEX_CACHE_MAX_MB"); }
    } unset;
    const std::string a = target("dwarf_units", "gcc", 5, 2), b = target("dwarf_units", "clang", 5, 2);
    answers(a, {"main"});
    REQUIRE(cache.files().size() == 1);
    const fs::path first = cache.files()[0];
    auto got = answers(b, {"main"});   // written, then the directory is over its bound: a's table goes
    CHECK(!got["main"].empty());
    REQUIRE(cache.files().size() == 1);
    CHECK(cache.files()[0] != first);
}

TEST_CASE("index cache: may_define_function says no only for a name find_functions does not find, before the DWARF "
          "is opened, reading the table once",
          "[dwarf]") {
    cache_guard cache;
    const std::vector<std::string> names = {"f", "no_such_function", "puts", "malloc", "printf", "memcpy",
                                            "__libc_start_main", "abort", "::abort", "abort(void)", " getenv ", "qsort",
                                            "std::f", "_dl_debug_state", "twice<int>", "operator new"};
    for (const char* lib : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}) {
        INFO(lib);
        {
            // elf_file::open shares one reader per file while a handle lives: each phase
            // below has its own.
            auto cold = elf_file::open(lib);
            if (cold->debug() == nullptr) {
                continue;   // no DWARF installed for it (libc6-dbg)
            }
            for (const auto& n : names) {
                functions_found(*cold->debug(), n);   // builds and writes the table (a miss)
            }
        }
        auto before = index_cache::stats();
        std::map<std::string, bool> may;
        std::vector<std::string> found_abort;
        {
            auto warm = elf_file::open(lib);
            for (const auto& n : names) {
                may[n] = warm->may_define_function(n);
            }
            // The table was read once for all the names (one hit, no miss), and the DWARF's
            // own lookups take it without reading or counting it again.
            auto after_peek = index_cache::stats();
            CHECK(after_peek.misses == before.misses);
            REQUIRE(warm->debug() != nullptr);
            found_abort = functions_found(*warm->debug(), "abort");
            CHECK(index_cache::stats().hits == after_peek.hits);
            CHECK(index_cache::stats().misses == before.misses);
            if (std::string(lib).find("libc") != std::string::npos) {
                CHECK(after_peek.hits == before.hits + 1);
                CHECK(may["abort"]);
                CHECK(may["::abort"]);
                CHECK(may[" getenv "]);
                CHECK(may["memcpy"]);
                CHECK_FALSE(may["f"]);
                CHECK_FALSE(may["no_such_function"]);
                CHECK_FALSE(may["std::f"]);
                CHECK(may["operator new"]);   // not a name the table answers: "may"
                CHECK(!found_abort.empty());
            }
        }
        auto truth = elf_file::open(lib);
        for (const auto& n : names) {
            INFO(n);
            if (!may[n]) {
                CHECK(functions_found(*truth->debug(), n).empty());
            }
        }
        CHECK(functions_found(*truth->debug(), "abort") == found_abort);
    }
    // Without the cache nothing is known before the DWARF is read: always "may".
    index_cache::set_enabled(false);
    auto off = elf_file::open("/lib/x86_64-linux-gnu/libc.so.6");
    CHECK(off->may_define_function("no_such_function"));
}
