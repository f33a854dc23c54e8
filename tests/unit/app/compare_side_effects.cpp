// What the compare commands refuse before evaluating anything in every thread or rank
// (libdwarfview's side_effect_of, as compare_gather uses it).

#include <catch2/catch.hpp>

#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/expr_effects.hpp"

using ompdbg::dwarf::parse_expression;
using ompdbg::dwarf::side_effect_of;

namespace {
std::string effect(const char* text) { return side_effect_of(*parse_expression(text)).value_or("none"); }
}  // namespace

TEST_CASE("compare: side effects are named with the part of the expression that has them", "[compare]") {
    CHECK(effect("x++") == "an increment (x++)");
    CHECK(effect("--x") == "a decrement (--x)");
    CHECK(effect("x = 1") == "an assignment (x = 1)");
    CHECK(effect("a[i] += 2") == "an assignment (a[i] += 2)");
    CHECK(effect("f(1, y)") == "a function call (f(1, y))");
    CHECK(effect("p->next->val * (q.n++)") == "an increment (q.n++)");
    CHECK(effect("$conv = 3") == "an assignment ($conv = 3)");
}

TEST_CASE("compare: reading expressions have no side effect, nor sizeof's operand", "[compare]") {
    CHECK(effect("x + 1") == "none");
    CHECK(effect("resid > 1e-6 && !done") == "none");
    CHECK(effect("arr[3].y") == "none");
    CHECK(effect("sizeof(x++)") == "none");
    CHECK(effect("*p == q->v") == "none");
}
