// debug_info: variables in scope, globals and named types, against gdb on the same binaries.

#include "elf_test_support.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/location.hpp"

#include <algorithm>
#include <cstring>
#include <set>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
using ompdbg::dwarf::location;

namespace {

/// A frame-less context: file addresses (load bias 0), no registers, no memory; TLS
/// offsets come back unchanged so a test can see them.
class static_context : public ompdbg::dwarf::location_context {
public:
    std::uint64_t pc() const override { return 0; }
    std::uint64_t load_bias() const override { return 0; }
    std::optional<std::uint64_t> read_register(int) const override { return std::nullopt; }
    void read_memory(std::uint64_t addr, std::span<std::byte>) const override {
        ompdbg::error::send("Cannot access memory at address " + fmt_hex(addr));
    }
    std::optional<std::uint64_t> cfa() const override { return std::nullopt; }
    std::optional<std::uint64_t> tls_address(std::uint64_t offset) const override { return offset; }
};

std::set<std::string> gdb_scope_names(const std::string& bin, const std::string& spec) {
    std::string out = gdb(bin, {"info scope " + spec});
    std::set<std::string> names;
    std::istringstream in(out);
    std::regex re(R"(^Symbol (\w+) is )");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, re)) {
            names.insert(m[1]);
        }
    }
    return names;
}

std::uint64_t memory_address(const location& loc) {
    auto* m = std::get_if<location::memory>(&loc.value);
    REQUIRE(m != nullptr);
    return m->addr;
}

}  // namespace

TEST_CASE("variables_at lists the locals and parameters gdb's info scope lists", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c", {0})));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    for (std::string marker : {"blocks_shadow", "blocks_inner", "add_body", "sum_point", "main_after_blank"}) {
        INFO(marker);
        int line = marker_line("dwarf_c.c", marker);
        auto [addrs, used] = d->addresses_for_line("dwarf_c.c", line);
        REQUIRE(addrs.size() == 1);
        auto vars = d->variables_at(addrs[0]);
        std::set<std::string> ours;
        for (auto& v : vars) {
            ours.insert(v.name);
        }
        CHECK(ours == gdb_scope_names(bin, "dwarf_c.c:" + std::to_string(line)));
    }
    // Innermost first, shadowing: inside the loop `total` is the loop's own, listed before
    // the function's `total` it shadows (gdb's info locals lists both: "total = 0" twice).
    int shadow = marker_line("dwarf_c.c", "blocks_shadow");
    auto vars = d->variables_at(d->addresses_for_line("dwarf_c.c", shadow).first.at(0));
    REQUIRE(vars.size() == 4);   // total (inner), then the function's n, total and i
    CHECK(vars[0].name == "total");
    CHECK(vars[0].decl_line == shadow);
    CHECK_FALSE(vars[0].is_parameter);
    auto outer = std::find_if(vars.begin() + 1, vars.end(), [](const auto& v) { return v.name == "total"; });
    REQUIRE(outer != vars.end());
    CHECK(outer->decl_line == marker_line("dwarf_c.c", "blocks_first"));
    for (auto& v : vars) {
        CHECK(v.is_parameter == (v.name == "n"));
        CHECK(v.frame_base_die.has_value());
        CHECK(v.var_type.size() == 4);
    }
}

TEST_CASE("find_global finds globals, statics and thread-locals where gdb's info address says", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    static_context ctx;
    for (std::string name : {"global_counter", "global_point", "global_array", "file_static",
                             "global_name", "global_ticks"}) {
        INFO(name);
        std::string out = gdb(bin, {"info address " + name});
        std::smatch m;
        REQUIRE(std::regex_search(out, m, std::regex(R"(is static storage at address (0x[0-9a-f]+))")));
        auto v = d->find_global(name);
        REQUIRE(v);
        CHECK(v->name == name);
        CHECK(memory_address(ompdbg::dwarf::evaluate_location(*v, ctx)) == std::stoull(m[1].str(), nullptr, 16));
        CHECK(v->is_external == (name != "file_static"));
    }
    std::string out = gdb(bin, {"info address thread_value"});
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"(thread-local variable at offset (0x[0-9a-f]+))")));
    auto tv = d->find_global("thread_value");
    REQUIRE(tv);
    CHECK(memory_address(ompdbg::dwarf::evaluate_location(*tv, ctx)) == std::stoull(m[1].str(), nullptr, 16));
    CHECK_FALSE(d->find_global("local"));      // a local of main is not a global
    CHECK_FALSE(d->find_global("no_such_global"));
}

TEST_CASE("find_global finds C++ namespace variables and static members", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_cxx")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    static_context ctx;
    for (std::string name : {"geo::namespace_value", "geo::shape::instances"}) {
        INFO(name);
        std::string out = gdb(bin, {"info address " + name});
        std::smatch m;
        REQUIRE(std::regex_search(out, m, std::regex(R"(is static storage at address (0x[0-9a-f]+))")));
        auto v = d->find_global(name);
        REQUIRE(v);
        CHECK(v->name == name);
        CHECK(memory_address(ompdbg::dwarf::evaluate_location(*v, ctx)) == std::stoull(m[1].str(), nullptr, 16));
    }
}

TEST_CASE("find_type finds base types, structs, typedefs and namespaced classes", "[dwarf]") {
    struct query {
        std::string bin, name, gdb_name;
    };
    std::vector<query> queries;
    for (auto& b : variants("dwarf_c", {0})) {
        for (std::string n : {"int", "char", "unsigned long", "long unsigned int", "struct point",
                              "point_t", "counter_t"}) {
            queries.push_back({b, n, n});
        }
    }
    for (auto& b : variants("dwarf_cxx", {0})) {
        for (std::string n : {"geo::shape", "class geo::shape", "geo::detail::node", "double", "int"}) {
            queries.push_back({b, n, n});
        }
    }
    for (auto& q : queries) {
        INFO(q.bin << " " << q.name);
        auto f = elf_file::open(q.bin);
        auto t = f->debug()->find_type(q.name);
        REQUIRE(t);
        std::string out = gdb(q.bin, {"print sizeof(" + q.gdb_name + ")"});
        std::smatch m;
        REQUIRE(std::regex_search(out, m, std::regex(R"(\$1 = (\d+))")));
        CHECK(t->size() == std::stoull(m[1].str()));
    }
    auto f = elf_file::open(target("dwarf_c", "gcc", 5, 0));
    CHECK_FALSE(f->debug()->find_type("struct no_such_struct"));
    CHECK_FALSE(f->debug()->find_type("union point"));
}
