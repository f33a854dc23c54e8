// The evaluator and formatter against gdb 13 itself: the same commands on the same
// binaries (gcc and clang, DWARF 4 and 5), static data read from the file.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "expr_file_context.hpp"
#include "ompdbg_test_paths.hpp"

namespace {

using ompdbg::test::file_eval_context;

const char* variants[] = {"gcc-dwarf4-O0", "gcc-dwarf5-O0", "clang-dwarf4-O0", "clang-dwarf5-O0"};

std::string program(const std::string& name, const std::string& variant) {
    return std::string(ompdbg::test::targets_dir) + "/dwarf/" + name + "-" + variant;
}

const std::vector<std::string> all_variants(std::begin(variants), std::end(variants));

void compare_with_gdb(const std::string& name, const std::vector<std::string>& commands,
                      const std::vector<std::string>& which = all_variants) {
    for (const std::string& variant : which) {
        std::string path = program(name, variant);
        auto expected = ompdbg::test::gdb_answers(path, commands);
        file_eval_context ctx(path);
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

std::vector<std::string> prefixed(const char* cmd, const std::vector<std::string>& exprs) {
    std::vector<std::string> out;
    for (auto& e : exprs) {
        out.push_back(std::string(cmd) + " " + e);
    }
    return out;
}

const std::vector<std::string> c_globals = {
    "g_int", "g_neg", "g_zero", "g_uint", "g_long", "g_ulong", "g_short", "g_ushort", "g_llong",
    "g_ullong", "g_char", "g_newline", "g_nul", "g_high", "g_schar", "g_uchar", "g_bool", "g_false",
    "g_float", "g_fneg", "g_fint", "g_double", "g_pi", "g_big", "g_small", "g_third", "g_dneg",
    "g_i8", "g_u8", "g_i16", "g_u32", "g_i64", "g_u64", "g_str", "g_full", "g_escapes",
    "g_empty_str", "g_repeats", "g_long_str", "g_msg", "g_null_str", "g_mut_str", "g_arr",
    "g_zeros", "g_runs", "g_2d", "g_matrix", "g_big_arr", "g_darr", "g_sarr", "g_pt", "g_pt2",
    "g_pts", "g_outer", "g_u", "g_color", "g_color_bad", "g_flags", "g_flag_one", "g_flag_zero",
    "g_flag_unknown", "g_negs", "g_bits", "g_ea", "g_ptr", "g_nullptr", "g_vptr", "g_ppt", "g_pp",
    "g_arr_ptr", "g_fn", "g_fn2", "g_fact", "g_twice", "g_pa", "g_ap", "g_wp", "g_typedef_uint",
    "g_const", "g_vol", "g_cc", "s_file_static", "add", "factorial", "main", "no_args", "sum_all",
    "g_anon", "g_edges", "g_ldouble", "g_ldpi", "g_ctrl", "g_neg_arr", "g_nan_inf", "g_anon.a",
    "g_anon.b", "g_edges.q", "&g_edges.q[3]", "g_ldpi * 2", "g_nan_inf[0] - g_nan_inf[0]",
    "g_flex", "g_flex.data", "g_flex.data[1]", "g_inc", "*g_inc", "g_bf", "g_packed", "g_fps",
    "g_negz", "g_denorm", "sizeof(g_flex)", "g_bf.c", "g_bf.u + 1"};

}  // namespace

TEST_CASE("print of every C global matches gdb", "[dwarf][value]") {
    compare_with_gdb("eval_values", prefixed("print", c_globals));
}

TEST_CASE("print/FMT of C globals matches gdb element-wise", "[dwarf][value]") {
    std::vector<std::string> cmds;
    for (const char* f : {"x", "d", "u", "o", "t", "c", "a", "z"}) {
        for (const char* e : {"g_int", "g_neg", "g_uchar", "g_schar", "g_short", "g_long", "g_ulong",
                              "g_bool", "g_color", "g_char", "g_ptr", "g_arr", "g_pt", "g_bits",
                              "g_outer", "g_str", "g_u", "g_zeros", "g_fn"}) {
            cmds.push_back(std::string("print/") + f + " " + e);
        }
    }
    for (const char* e : {"g_double", "g_float", "g_fneg", "g_darr", "g_int", "g_long"}) {
        cmds.push_back(std::string("print/x ") + e);
        cmds.push_back(std::string("print/f ") + e);
        cmds.push_back(std::string("print/d ") + e);
    }
    cmds.push_back("print/s g_str");
    cmds.push_back("print/s g_msg");
    cmds.push_back("print/x g_msg");
    compare_with_gdb("eval_values", cmds);
}

TEST_CASE("ptype and whatis of C types and expressions match gdb", "[dwarf][type]") {
    std::vector<std::string> subjects = {
        "struct point", "struct outer", "union u", "enum color", "enum flags", "enum negs",
        "struct bits", "struct with_ptrs", "struct empty_arr", "point_t", "uint_t", "binop_t",
        "matrix_t", "g_pt2", "g_fn", "g_matrix", "g_pts", "g_ppt", "g_pa", "g_ap", "g_cc", "g_const",
        "g_vol", "g_bits.a", "g_color", "add", "sum_all", "no_args", "main", "int", "unsigned long",
        "char *", "struct point *", "g_pt.x + 1", "&g_pts[1]", "g_long_str", "g_uchar + 1", "'a'",
        "1.5f", "g_float * 2", "g_float * 2.0", "g_uint + 1", "g_uint + 1L", "-g_uchar",
        "g_color + 1", "g_bool", "!g_int", "g_arr[0]@2", "&g_2d[0][1]", "*g_2d", "&g_fn", "*g_pa",
        "g_arr + 1", "\"abc\"", "sizeof(int)", "4294967296", "2147483648", "18446744073709551615",
        "5L", "1u", "0xffffffff", "g_msg", "g_fact", "*g_ppt", "g_wp.fn", "g_u.bytes",
        "*(int *)0", "(char)65", "(struct point *)0", "(unsigned char)300", "(point_t *)g_ppt",
        "int (*)(int, int)", "int *[3]", "int (*)[3]", "const char *", "unsigned",
        "long long unsigned int", "struct anon_holder", "struct repeat_edges", "g_anon", "g_ldouble",
        "g_edges.q", "char * const *", "const volatile int", "int (*(*)[2])(void)", "struct flex",
        "g_flex.data", "g_inc", "struct bf", "struct packed", "g_fps"};
    std::vector<std::string> cmds = prefixed("whatis", subjects);
    auto p = prefixed("ptype", subjects);
    cmds.insert(cmds.end(), p.begin(), p.end());
    compare_with_gdb("eval_values", cmds);
}

TEST_CASE("C expressions evaluate and print as gdb does", "[dwarf][expr]") {
    compare_with_gdb("eval_values", prefixed("print", {
        "g_int + 1", "g_int * 2 - 3", "g_int / 5", "g_int % 5", "-g_int", "g_neg / 2", "-7 % 3",
        "g_uint + 1", "1u - 2", "g_uchar + 1", "~g_uchar", "~0", "!g_int", "!0", "g_int == 42",
        "g_int != 42", "g_int < 43 && g_neg < 0", "g_int > 100 || g_zero", "1 ? 2 : 3",
        "g_zero ? 2 : 3", "(1, 2)", "1L << 40", "-1 >> 1", "g_uint >> 4", "0x10", "010",
        "4294967296", "18446744073709551615", "1.5", "1.5f", "10 / 3.0", "g_float * 2",
        "g_double + g_int", "(float)1 / 3", "1.0 / 0", "-1.0 / 0", "g_pi * 2", "'A'", "'\\n'",
        "'\\0'", "'\\''", "'\\\\'", "\"hi\"", "\"a\\tb\"", "sizeof(int)", "sizeof(g_pt)",
        "sizeof g_int", "sizeof(g_arr) / sizeof(g_arr[0])", "sizeof(struct outer)", "sizeof(long double)",
        "(char)65", "(long)g_int", "(unsigned char)300", "(short)-1", "(unsigned short)-1",
        "(int)2.9", "(int)-2.9", "(double)g_int", "(float)g_pi", "(_Bool)5", "(enum color)1",
        "(enum color)2 == BLUE", "(uint_t)-1", "(point_t *)g_ppt", "(struct point *)0",
        "(int (*)(int, int))add", "(binop_t)0", "(void *)g_ptr", "(char *)g_str", "(long)&g_int",
        "*g_ptr", "*g_ppt", "g_ppt->y", "(*g_ppt).x", "g_ppt.x", "&g_pt", "&g_pt.y", "*&g_pt",
        "&g_arr[3] - &g_arr[1]", "g_ptr + 1", "g_arr + 1", "g_arr_ptr - 1", "g_arr_ptr[-1]",
        "*g_arr@3", "g_arr[1]@2", "g_2d[1]", "g_2d[1][2]", "&g_2d", "&g_2d[1]", "*g_pa", "g_pa[1][0]",
        "g_msg[1]", "*g_msg", "g_msg + 7", "g_str[0]", "&g_str[1]", "g_outer.in", "g_outer.arr[2]",
        "g_outer.name", "g_pts[2].y", "g_wp.next", "*g_wp.ip", "g_wp.fn", "*g_pp", "**g_pp",
        "RED", "BLUE + 1", "g_color == GREEN", "(unsigned char *)g_msg", "(signed char *)g_msg",
        "(const char *)g_msg", "(uint8_t *)g_msg", "(char *)1", "(char *)g_long_str", "&g_str",
        "*g_msg@5", "g_str + 1", "g_seq", "g_msg[0]@4", "(char **)&g_msg", "*(char **)&g_msg", "F_A | F_C", "(enum flags)(F_A | F_C)", "NEG",
        "g_bits.b", "g_bits.e + 1", "g_bits.f", "g_u.bytes[3]", "g_u.f", "add", "&add", "*add",
        "add + 1", "main", "g_fn == add", "g_ptr == &g_int", "g_ptr == 0", "!g_ptr", "g_ptr && 1",
        "g_nullptr == 0", "s_file_static * 2", "g_llong * 2", "-g_ulong", "g_i64 + 1", "g_u32 >> 28",
    }));
}

TEST_CASE("expression errors use gdb's wording", "[dwarf][expr]") {
    compare_with_gdb("eval_values", prefixed("print", {
        "nosuchvar", "1 +", "1 xyz", "1/0", "1%0", "g_pt.q", "g_ptr->x", "g_int.x", "*g_int",
        "&5", "5 = 3", "*(int*)0", "g_int[1]", ")", "g_pt.", "(1", "g_arr[1", "\"abc", "'a",
        "08", "0x", "g_pt + 1", "-g_pt", "g_ptr * 2", "g_ptr + g_ptr", "1.5 % 2", "g_int@0",
        "3@2", "(struct nosuch *)0", "(nosuch *)0", "sizeof(struct nosuch)", "(enum nosuch)1",
        "*g_vptr", "g_pt == g_pt", "$1", "$$", "$$3", "$", "1 +* 2", "$nonexistent",
    }));
}

TEST_CASE("value history and convenience variables behave as in gdb", "[dwarf][expr]") {
    compare_with_gdb("eval_values", {
        "print g_int", "print $", "print $1", "print $ + 1", "print $$", "print $$2", "print $9",
        "print $$7", "print g_pt", "print $.y", "print $$3", "print $5 * 2", "print $conv",
        "print $conv = 5", "print $conv * 3", "print $conv += 1", "print $conv",
    });
}

TEST_CASE("C++ values, references, classes and namespaces print as in gdb", "[dwarf][value]") {
    std::vector<std::string> cmds = prefixed("print", {
        "g_value", "g_ref", "g_cref", "g_point", "g_ppoint", "g_shape", "g_derived", "g_klass",
        "g_plain", "g_flag", "g_number", "g_holder", "g_big", "g_text", "g_arr", "geo::counter",
        "geo::detail::depth", "klass::instances", "g_derived.id", "g_derived.weight", "g_ref + 1",
        "&g_ref", "*&g_ref", "g_shape == geo::shape::square", "P_ONE", "main", "1 < 2", "!g_flag",
        "sizeof(g_derived)", "(geo::point*)0", "g_ppoint->x", "g_holder.pp->y", "g_holder.ref",
        "true", "false", "g_flag == true", "g_klass.a", "g_klass.instances", "(long)g_shape",
        "geo::shape::circle", "(geo::shape)3", "g_c16", "g_c32", "g_wc", "g_s16", "g_ws", "g_smile", "&g_derived.weight", "*g_ppoint", "g_derived.active",
        "g_point.x + g_ref", "g_arr[g_ref - 2]",
    });
    auto types = prefixed("whatis", {"g_value", "g_ref", "g_point", "g_ppoint", "g_shape", "g_derived",
                                     "g_klass", "g_plain", "g_number", "g_holder", "g_big", "geo::point",
                                     "klass", "derived", "base", "main", "1 < 2", "g_ref + 1", "&g_ref"});
    cmds.insert(cmds.end(), types.begin(), types.end());
    auto ptypes = prefixed("ptype", {"g_value", "g_ref", "g_point", "g_ppoint", "g_shape", "g_derived",
                                     "g_klass", "g_plain", "g_number", "g_holder", "g_big", "geo::point",
                                     "klass", "derived", "struct base", "main"});
    cmds.insert(cmds.end(), ptypes.begin(), ptypes.end());
    compare_with_gdb("eval_cxx", cmds);
}

TEST_CASE("DWARF 2/3 layouts (block member offsets, big-endian bit offsets) print as in gdb", "[dwarf][type]") {
    std::vector<std::string> cmds = prefixed("print", c_globals);
    for (const char* t : {"struct bits", "struct outer", "struct anon_holder", "union u", "enum flags"}) {
        cmds.push_back(std::string("ptype ") + t);
    }
    for (const char* e : {"g_bits.a", "g_bits.b", "g_bits.f", "g_outer.in.c", "g_anon.named.c"}) {
        cmds.push_back(std::string("print ") + e);
        cmds.push_back(std::string("print/x ") + e);
    }
    compare_with_gdb("eval_values_strict", cmds,
                     {"gcc-dwarf2-O0", "gcc-dwarf3-O0", "clang-dwarf2-O0", "clang-dwarf3-O0"});
}
