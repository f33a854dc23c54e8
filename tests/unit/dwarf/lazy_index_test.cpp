// The lazy side of debug_info (issue 9): backtrace names computed without the name index
// must be the index's names, lookups of names a file cannot hold must answer without it,
// every open of one file shares one reader (one index per file for all processes), and
// lookups through the units that may name a function find what the whole index finds.

#include "elf_test_support.hpp"

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/index_cache.hpp"
#include "internal/unit_filter.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <map>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
using ompdbg::dwarf::symbol_kind;

namespace {

/// Names of function_chain_at at the entry and middle of every sized function symbol.
std::map<std::uint64_t, std::vector<std::string>> chain_names(const elf_file& f) {
    std::map<std::uint64_t, std::vector<std::string>> out;
    for (const auto& s : f.symbols()) {
        if (s.kind != symbol_kind::function || s.value == 0 || s.size == 0) {
            continue;
        }
        for (std::uint64_t a : {s.value, s.value + s.size / 2}) {
            std::vector<std::string> names;
            for (const auto& fn : f.debug()->function_chain_at(a)) {
                names.push_back(fn.name);
            }
            out[a] = names;
        }
    }
    return out;
}

}  // namespace

TEST_CASE("backtrace names computed without the index are the index's names", "[dwarf]") {
    auto bin = GENERATE(from_range([] {
        auto v = variants("dwarf_cxx");
        auto c = variants("dwarf_c");
        v.insert(v.end(), c.begin(), c.end());
        return v;
    }()));
    INFO(bin);
    auto f = elf_file::open(bin);
    REQUIRE(f->debug() != nullptr);
    auto lazy = chain_names(*f);         // no lookup by name yet: no index
    REQUIRE(!f->debug()->all_function_names().empty());   // builds the index
    auto indexed = chain_names(*f);
    CHECK(lazy == indexed);
    // Qualified C++ names really are there (not plain names on both sides).
    if (bin.find("dwarf_cxx") != std::string::npos) {
        bool qualified = false;
        for (auto& [addr, names] : lazy) {
            for (auto& n : names) {
                qualified = qualified || n.find("::") != std::string::npos;
            }
        }
        CHECK(qualified);
    }
}

TEST_CASE("names a file cannot hold are not found, names it holds still are", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_cxx")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    REQUIRE(d != nullptr);
    CHECK(d->find_functions("no_such_function_anywhere").empty());
    CHECK_FALSE(d->find_global("no_such_global_anywhere"));
    CHECK_FALSE(d->find_type("struct no_such_type_anywhere"));
    // The same lookups after names the file holds (gdb agrees they exist: see the
    // break FUNC tests) still find them.
    CHECK(!d->find_functions("main").empty());
    CHECK(!d->find_functions("geo::shape::area").empty());
    CHECK(d->find_type("int"));
    CHECK(d->find_functions("no_such_function_anywhere").empty());
}

TEST_CASE("C integer types are found in any word order before any index exists", "[dwarf]") {
    // "long" names the DIE "long int", "unsigned long" names "long unsigned int": strings
    // the file does not hold as such.
    auto f = elf_file::open(target("dwarf_c", "gcc", 5, 0));
    auto* d = f->debug();
    REQUIRE(d != nullptr);
    auto l = d->find_type("long");
    REQUIRE(l);
    CHECK(l->name() == "long");
    auto ul = d->find_type("unsigned long");
    REQUIRE(ul);
    CHECK(ul->name() == "unsigned long");
}

TEST_CASE("every open of one file shares one reader until the last handle goes", "[dwarf]") {
    std::string bin = target("dwarf_c", "gcc", 5, 0);
    auto a = elf_file::open(bin);
    // Another spelling of the same file (as /proc/PID/maps may name it) shares it too.
    auto b = elf_file::open(std::filesystem::path(bin).parent_path() / "." / std::filesystem::path(bin).filename());
    REQUIRE(a->debug() != nullptr);
    CHECK(a->debug() == b->debug());
    CHECK(b->path() != a->path());   // each handle keeps the path it was opened with
    CHECK(&a->symbols() == &b->symbols());
    auto other = elf_file::open(target("dwarf_c", "gcc", 5, 2));
    CHECK(other->debug() != a->debug());
    a.reset();
    // b alone keeps the reader: its answers still work.
    CHECK(!b->find_symbols("main").empty());
    CHECK(!b->debug()->find_functions("main").empty());
}

namespace {

/// What find_functions answers for `name`, in a comparable form.
std::vector<std::string> functions_found(const ompdbg::dwarf::debug_info& d, const std::string& name) {
    std::vector<std::string> out;
    for (const auto& fn : d.find_functions(name)) {
        out.push_back(fmt::format("{} {:#x} {:#x} {}", fn.name, fn.entry_pc, fn.breakpoint_pc, fn.is_inlined));
    }
    return out;
}

}  // namespace

TEST_CASE("lookups that index only the units naming a function find what the whole index finds", "[dwarf]") {
    auto bin = GENERATE(from_range([] {
        auto v = variants("dwarf_units");
        for (auto& x : variants("dwarf_cxx")) {
            v.push_back(x);
        }
        return v;
    }()));
    INFO(bin);
    // Every name the index knows, and spellings a user types (qualified, partly qualified,
    // template instances, statics of several units, linkage names).
    std::vector<std::string> names = {"main", "step", "shapes::twice", "twice", "twice<int>",
                                      "shapes::twice<double>", "shapes::box::area", "box::area", "area",
                                      "perimeter", "shapes::square", "only_b::helper", "helper", "a_work",
                                      "_ZNK6shapes3box4areaEv", "b_work(int)", "no_such_function", "x", "h", "box"};
    std::map<std::string, std::vector<std::string>> whole;
    {
        auto f = elf_file::open(bin);
        REQUIRE(f->debug() != nullptr);
        for (const auto& n : f->debug()->all_function_names()) {   // builds the whole index
            names.push_back(n);
        }
        for (const auto& n : names) {
            whole[n] = functions_found(*f->debug(), n);
        }
    }
    // A fresh reader (the last handle is gone): no whole index until something needs it.
    // unit_filter name by name, whatever the index cache holds (index_cache_test.cpp
    // compares the cache's tables, cold and warm, with the same whole index).
    const bool cache_was_on = ompdbg::dwarf::index_cache::enabled();
    ompdbg::dwarf::index_cache::set_enabled(false);
    struct restore_cache {
        bool on;
        ~restore_cache() { ompdbg::dwarf::index_cache::set_enabled(on); }
    } restore{cache_was_on};
    auto f = elf_file::open(bin);
    REQUIRE(f->debug() != nullptr);
    std::size_t found = 0;
    for (const auto& n : names) {
        INFO(n);
        CHECK(functions_found(*f->debug(), n) == whole[n]);
        found += whole[n].empty() ? 0 : 1;
    }
    CHECK(!whole["main"].empty());   // real lookups were compared, not empty answers only
    CHECK(found >= 3);
    if (bin.find("dwarf_units") != std::string::npos) {
        // The same static in three units, the inline helper where it was not inlined away.
        CHECK(whole["step"].size() >= (is_optimized(bin) ? 0u : 3u));
        CHECK(!whole["shapes::box::area"].empty());
    }
}

TEST_CASE("unit_filter: a unit is a candidate only when a subprogram's name attribute holds the string", "[dwarf]") {
    // gcc's DWARF names DIEs through .debug_str offsets; such an offset also turns up by
    // chance among a large unit's other 4-byte values (a DW_FORM_ref4 of the same value),
    // and a short name inline ("x\0") among any unit's bytes: only the unit whose
    // subprogram is named so is kept. clang's DWARF 5 names through .debug_str_offsets:
    // a unit is read when its contribution holds the string's offset. Parameters, members
    // and types of the name make no unit a candidate (libc names thousands of parameters
    // `f`: `break f` indexed 573 of its 2,063 units for none).
    for (const auto& bin : variants("dwarf_units")) {
        INFO(bin);
        auto f = elf_file::open(bin);
        REQUIRE(f->debug() != nullptr);
        ompdbg::dwarf::internal::unit_filter filter(f->debug()->raw());
        REQUIRE(filter.usable());
        CHECK(filter.candidates("main").size() == 1);          // units_main.cpp
        CHECK(filter.candidates("no_such_function").empty());
        CHECK(filter.candidates("x").empty());                 // a parameter in every unit
        CHECK(filter.candidates("h").empty());                 // a member
        CHECK(filter.candidates("box").empty());               // a type
        if (bin.find("-gcc-") != std::string::npos || !is_optimized(bin)) {
            CHECK(filter.candidates("step").size() == 3);      // a static of each unit (clang -O2 folds them away)
        }
        if (bin.find("-gcc-") != std::string::npos) {
            CHECK(filter.candidates("a_work").size() == 2);    // units_a.cpp, and main's declaration
        }
    }
}
