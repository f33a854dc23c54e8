// type: sizes, member offsets and array dimensions against gdb's answers on the same
// binaries (offsetof through `&((T *)0)->m`, sizeof, whatis of elements).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "expr_file_context.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "ompdbg_test_paths.hpp"

namespace {

const char* variants[] = {"gcc-dwarf4-O0", "gcc-dwarf5-O0", "clang-dwarf4-O0", "clang-dwarf5-O0"};

std::string program(const std::string& name, const std::string& variant) {
    return std::string(ompdbg::test::targets_dir) + "/dwarf/" + name + "-" + variant;
}

}  // namespace

TEST_CASE("type sizes and member offsets agree with gdb", "[dwarf][type]") {
    struct probe {
        const char* type;
        std::vector<const char*> members;
    };
    std::vector<probe> probes = {
        {"struct point", {"x", "y"}},
        {"struct outer", {"p", "in", "arr", "name", "ratio", "in.c", "p.y", "arr[2]"}},
        {"union u", {"i", "f", "bytes", "bytes[3]"}},
        {"struct bits", {"d"}},
        {"struct with_ptrs", {"ip", "s", "fn", "next"}},
        {"struct anon_holder", {"x", "a", "b", "named", "named.c"}},
        {"struct repeat_edges", {"ten", "eleven", "cten", "celeven", "q", "q[5].x"}},
        {"struct packed", {"c", "i", "s"}},
        {"struct flex", {"n", "data"}},
    };
    std::vector<std::string> cmds;
    for (auto& p : probes) {
        cmds.push_back(std::string("print sizeof(") + p.type + ")");
        for (auto* m : p.members) {
            cmds.push_back(std::string("print/d &((") + p.type + " *)0)->" + m);
        }
    }
    for (const char* variant : variants) {
        std::string path = program("eval_values", variant);
        auto expected = ompdbg::test::gdb_answers(path, cmds);
        ompdbg::test::file_eval_context ctx(path);
        for (std::size_t i = 0; i < cmds.size(); ++i) {
            INFO(variant << ": " << cmds[i]);
            CHECK(ompdbg::test::our_answer(ctx, cmds[i]) == expected[i]);
        }
    }
}

TEST_CASE("type::members reports bitfields from the LSB, in every DWARF version", "[dwarf][type]") {
    // Ground truth is the SysV x86-64 ABI's bitfield layout, which every compiler and
    // DWARF encoding (DW_AT_data_bit_offset, or DWARF 2/3's big-endian DW_AT_bit_offset
    // with a storage unit) must map to the same little-endian bit positions.
    std::vector<std::string> paths;
    for (const char* v : variants) {
        paths.push_back(program("eval_values", v));
    }
    for (const char* v : {"gcc-dwarf2-O0", "gcc-dwarf3-O0", "clang-dwarf2-O0", "clang-dwarf3-O0"}) {
        paths.push_back(program("eval_values_strict", v));
    }
    for (auto& path : paths) {
        INFO(path);
        ompdbg::test::file_eval_context ctx(path);
        auto t = ctx.lookup_type("struct bits");
        REQUIRE(t);
        auto ms = t->members();
        REQUIRE(ms.size() == 6);
        // unsigned a : 3; signed b : 5; unsigned c : 1; int d; unsigned e : 20; signed f : 12
        // (bit positions from the start of the struct).
        std::vector<std::pair<std::uint64_t, std::uint32_t>> expected = {{0, 3}, {3, 5}, {8, 1}, {32, 32}, {64, 20}, {84, 12}};
        for (std::size_t i = 0; i < ms.size(); ++i) {
            INFO(ms[i].name);
            CHECK(ms[i].byte_offset * 8 + ms[i].bit_offset == expected[i].first);
            CHECK(ms[i].bit_size.value_or(32) == expected[i].second);
            CHECK(ms[i].bit_offset < 8);
        }
        CHECK(t->size() == 12);
        CHECK(t->name() == "struct bits");
    }
}
