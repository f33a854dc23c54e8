// Operator precedence and assignment against gdb 13 on the same binaries.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "expr_file_context.hpp"
#include "ompdbg_test_paths.hpp"

namespace {

using ompdbg::test::file_eval_context;

const char* variants[] = {"gcc-dwarf4-O0", "gcc-dwarf5-O0", "clang-dwarf4-O0", "clang-dwarf5-O0"};

std::string program(const std::string& variant) {
    return std::string(ompdbg::test::targets_dir) + "/dwarf/eval_values-" + variant;
}

void compare(const std::vector<std::string>& commands, const std::vector<std::string>& gdb_pre) {
    for (const char* variant : variants) {
        auto expected = ompdbg::test::gdb_answers(program(variant), commands, gdb_pre);
        file_eval_context ctx(program(variant));
        for (std::size_t i = 0; i < commands.size(); ++i) {
            std::string ours = ompdbg::test::our_answer(ctx, commands[i]);
            if (ours != expected[i]) {
                FAIL_CHECK(variant << ": " << commands[i] << "\n  ours: " << ours << "\n  gdb:  " << expected[i]);
            } else {
                SUCCEED();
            }
        }
    }
}

}  // namespace

TEST_CASE("operators bind with C precedence and associativity, as in gdb", "[dwarf][expr]") {
    std::vector<std::string> exprs = {
        "1 + 2 * 3", "(1 + 2) * 3", "10 - 4 - 3", "100 / 10 / 5", "2 * 3 % 4", "1 << 2 + 1",
        "1 | 2 ^ 3 & 4", "6 & 3 == 3", "-2 * -3", "!0 + 1", "~1 + 1", "1 < 2 == 1",
        "3 > 2 > 1", "1 + 2 < 4 && 5 > 4 || 0", "0 || 1 && 0", "1 ? 2 : 0 ? 3 : 4",
        "0 ? 2 : 0 ? 3 : 4", "g_arr[1] + g_arr[2] * 2", "*g_arr + 1", "*(g_arr + 1)",
        "-g_arr[1]", "&g_pts[1].y", "*&g_pts[1].y", "sizeof g_int * 2", "(long)g_int * 2",
        "(char)g_int + 1", "- - 3", "!!7", "~~5", "-(-2147483647 - 1)", "g_int - -1",
        "g_outer.arr[1] * g_outer.p.y", "*g_ppt->y + 0", "g_ppt->x + g_ppt->y",
        "g_2d[1][1] - g_2d[0][2]", "*g_2d[1] + 1", "**g_2d", "*g_arr@2", "g_arr[0]@1+1",
        "(g_int, g_neg, 3)", "g_neg < 0 ? -g_neg : g_neg", "1 - 1 ? 5 : 6", "0x10 >> 2 << 1",
        "g_int & 0xf | 0x100", "g_uint / 3 * 3", "-g_uint", "g_short * g_ushort",
        "g_schar * g_uchar", "g_long / g_int", "g_ulong + g_neg", "g_int * 1.5", "g_float + g_int",
        "g_double / 4 * 2", "'a' + 1", "'a' < 'b'", "g_str[1] - 'a'",
    };
    std::vector<std::string> cmds;
    for (auto& e : exprs) {
        cmds.push_back("print " + e);
    }
    compare(cmds, {});
}

TEST_CASE("assignment writes through memory like gdb's set var on the live program", "[dwarf][expr]") {
    // gdb runs the program to main (where nothing has been modified yet); ours writes into
    // an overlay of the file's data. Only non-address results are compared (gdb's process
    // is relocated).
    std::vector<std::string> cmds = {
        "set var g_int = 7", "print g_int", "print g_int = g_int * 2", "set var g_bits.b = -7",
        "print g_bits", "print g_pt = g_pts[2]", "print g_pt", "print g_char = 'z'",
        "print g_arr[2] = 99", "print g_arr", "print g_double = 1.25", "print g_float = g_double * 2",
        "set var g_color = BLUE", "print g_color", "print g_uchar = 300", "print g_bits.e = 1048575",
        "print g_bits.f = -2", "print g_bits", "print g_int += 5", "print g_int++", "print g_int",
        "print --g_int", "print g_int -= 3", "print g_int *= 2", "print g_int /= 4", "print g_int <<= 3",
        "print g_int |= 1", "print g_str[0] = 'J'", "print g_str", "print g_arr = 1",
        "print g_pt = 1", "print (char)g_int = 3", "print 5 = 3", "print g_bool = 5",
        "print g_i8 = -1", "print g_pt.x = 1.9", "print g_outer.in = g_outer.in",
        "print g_int = 1, g_neg = 2", "print g_neg", "print g_flags = F_B | F_C", "print g_flags",
        "print *g_ptr = 11", "print g_int", "print g_ppt->y = 77", "print g_pt", "print g_sarr[1] = -9",
        "print g_sarr", "print g_u.i = 0x31323334", "print g_u", "print g_darr[2] += 0.5",
        "print *g_arr@3", "print $conv = g_int", "print g_int = $conv + 1",
    };
    compare(cmds, {"break main", "run"});
}

TEST_CASE("malformed expressions give gdb's error and never crash", "[dwarf][expr]") {
    std::vector<std::string> exprs = {
        "99999999999999999999999", "1e999", "1.5.5", "'ab'", "''", "'a", "#", "1 ? 2", "g_pt->",
        "sizeof", "(int)", "(struct point)1", "(struct point)g_pt", "g_arr[", "1 2", "0x1g", "1ull",
        ".5", "5.", "1e3", "1e+3f", "0x7fffffff", "0x80000000", "017777777777777777777777",
        "g_int`", "'\\x41'", "'\\101'", "\"a\" \"b\"", "g_arr == g_arr", "g_pt.x.y", "&&g_int",
        "~1.5", "!g_pt", "g_ppt[0]", "g_vptr[0]", "g_vptr + 1", "*main", "g_ptr - g_vptr",
        "g_ptr < g_vptr", "g_int = ", "g_big_arr[0]@100000", "((((((((((((((((((((1))))))))))))))))))))",
        "\"unterminated", "g_int +", "(", ")", "[", "]", "->", ".", "::", "1 +* 2", "$", "$$$",
        "*g_fn", "-g_ptr", "+g_ptr", "+g_pt", "g_ptr / 2", "~g_ptr",
        "g_pt.x = ", "= 5", "g_str + 1", "g_str == 0", "g_msg == g_msg", "g_color | 4",
    };
    std::vector<std::string> cmds;
    for (auto& e : exprs) {
        cmds.push_back("print " + e);
    }
    compare(cmds, {});
}

TEST_CASE("pathological input fails cleanly", "[dwarf][expr]") {
    ompdbg::test::file_eval_context ctx(program("gcc-dwarf5-O0"));
    std::string deep(100000, '(');
    CHECK_THROWS_AS(ompdbg::dwarf::evaluate(deep + "1", ctx), ompdbg::error);
    std::string deep_unary(100000, '-');
    CHECK_THROWS_AS(ompdbg::dwarf::evaluate(deep_unary + "1", ctx), ompdbg::error);
    std::string deep_cast;
    for (int i = 0; i < 5000; ++i) {
        deep_cast += "(int (*)";
    }
    CHECK_THROWS_AS(ompdbg::dwarf::evaluate(deep_cast, ctx), ompdbg::error);
    std::string binary_noise;
    for (int i = 1; i < 256; ++i) {
        binary_noise += static_cast<char>(i);
    }
    CHECK_THROWS_AS(ompdbg::dwarf::evaluate(binary_noise, ctx), ompdbg::error);
    CHECK_THROWS_AS(ompdbg::dwarf::evaluate("", ctx), ompdbg::error);
    // A context without a process cannot run the call: gdb's message.
    CHECK_THROWS_WITH(ompdbg::dwarf::evaluate("g_fn(1)", ctx),
                      "You can't do that without a process to debug.");
    CHECK_THROWS_WITH(ompdbg::dwarf::evaluate("*g_big_arr@100000", ctx),
                      "value requires 400000 bytes, which is more than max-value-size");
}
