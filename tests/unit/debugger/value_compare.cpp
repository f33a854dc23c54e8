// The model of `omp compare` / `mpi compare` (value_compare.hpp) on hand-made values: what
// groups, summaries and differences a user would read, without a process.

#include <catch2/catch.hpp>

#include "ompdbg/debugger/compare/value_compare.hpp"

using namespace ompdbg::debugger::compare;
using ompdbg::dwarf::value_tree;

namespace {

value_tree integer(long long n) {
    value_tree t;
    t.k = value_tree::kind::integer;
    t.number = n;
    t.text = std::to_string(n);
    return t;
}

value_tree floating(long double n, std::string text) {
    value_tree t;
    t.k = value_tree::kind::floating;
    t.number = n;
    t.text = std::move(text);
    return t;
}

value_tree array(const std::vector<long long>& items) {
    value_tree t;
    t.k = value_tree::kind::aggregate;
    for (std::size_t i = 0; i < items.size(); ++i) {
        t.parts.emplace_back("[" + std::to_string(i) + "]", integer(items[i]));
    }
    t.text = "{...}";
    return t;
}

sample of(int member, value_tree v) { return sample{member, std::move(v), {}}; }
sample failed(int member, std::string message) { return sample{member, std::nullopt, std::move(message)}; }

}  // namespace

TEST_CASE("compare: equal integers form one group and the summary names who holds min and max", "[compare]") {
    auto r = compare_samples({of(0, integer(4)), of(1, integer(7)), of(2, integer(4)), of(3, integer(4))}, {});
    REQUIRE(r.groups.size() == 2);
    CHECK(r.groups[0].members == std::vector<int>{0, 2, 3});   // largest group first
    CHECK(r.groups[0].value.text == "4");
    CHECK(r.groups[1].members == std::vector<int>{1});
    CHECK_FALSE(r.groups[1].differs);   // scalars: no element diff
    REQUIRE(r.stats);
    CHECK(r.stats->count == 4);
    CHECK(r.stats->min == 4);
    CHECK(r.stats->max == 7);
    CHECK(r.stats->mean == Approx(4.75));
    CHECK(r.stats->min_members == std::vector<int>{0, 2, 3});
    CHECK(r.stats->max_members == std::vector<int>{1});
    CHECK_FALSE(r.all_equal());
}

TEST_CASE("compare: groups of the same size are ordered by their lowest member", "[compare]") {
    auto r = compare_samples({of(3, integer(1)), of(0, integer(2)), of(1, integer(1)), of(2, integer(2))}, {});
    REQUIRE(r.groups.size() == 2);
    CHECK(r.groups[0].members == std::vector<int>{0, 2});
    CHECK(r.groups[1].members == std::vector<int>{1, 3});
}

TEST_CASE("compare: doubles within an absolute or relative tolerance are one group with their span", "[compare]") {
    std::vector<sample> s{of(0, floating(0.25, "0.25")), of(1, floating(0.2500001, "0.25000010000000001")),
                          of(2, floating(0.5, "0.5"))};
    auto exact = compare_samples(s, {});
    CHECK(exact.groups.size() == 3);
    auto abs = compare_samples(s, tolerance{1e-6, 0});
    REQUIRE(abs.groups.size() == 2);
    CHECK(abs.groups[0].members == std::vector<int>{0, 1});
    CHECK(abs.groups[0].low_text == "0.25");
    CHECK(abs.groups[0].high_text == "0.25000010000000001");
    CHECK(abs.groups[1].low_text.empty());
    auto rel = compare_samples(s, tolerance{0, 1e-3});
    CHECK(rel.groups.size() == 2);
    auto outside = compare_samples(s, tolerance{1e-9, 0});
    CHECK(outside.groups.size() == 3);
}

TEST_CASE("compare: a tolerance does not chain: groups grow from the smallest number", "[compare]") {
    // 1.0, 1.6, 2.2 with tolerance 1: 1.6 joins 1.0, 2.2 is 1.2 from 1.0 and starts its own.
    auto r = compare_samples({of(2, floating(2.2, "2.2")), of(0, floating(1.0, "1")), of(1, floating(1.6, "1.6"))},
                             tolerance{1.0, 0});
    REQUIRE(r.groups.size() == 2);
    CHECK(r.groups[0].members == std::vector<int>{0, 1});
    CHECK(r.groups[1].members == std::vector<int>{2});
}

TEST_CASE("compare: an array differing in one element names the count and the first index", "[compare]") {
    auto r = compare_samples({of(0, array({0, 10, 20, 30})), of(1, array({0, 10, 20, 30})), of(2, array({0, 10, -1, 30}))},
                             {});
    REQUIRE(r.groups.size() == 2);
    REQUIRE(r.groups[1].differs);
    CHECK(r.groups[1].differs->differing == 1);
    CHECK(r.groups[1].differs->total == 4);
    CHECK(r.groups[1].differs->first == "[2]");
    CHECK_FALSE(r.groups[1].differs->fields);
    CHECK_FALSE(r.stats);   // no summary for arrays
}

TEST_CASE("compare: a struct differing in a field names the field", "[compare]") {
    auto point = [](long long x, long double y, std::string yt) {
        value_tree t;
        t.k = value_tree::kind::aggregate;
        t.has_fields = true;
        t.parts.emplace_back(".x", integer(x));
        t.parts.emplace_back(".y", floating(y, std::move(yt)));
        return t;
    };
    auto r = compare_samples({of(0, point(1, 2.5, "2.5")), of(1, point(1, 3.5, "3.5")), of(2, point(1, 2.5, "2.5"))}, {});
    REQUIRE(r.groups.size() == 2);
    REQUIRE(r.groups[1].differs);
    CHECK(r.groups[1].differs->fields);
    CHECK(r.groups[1].differs->differing == 1);
    CHECK(r.groups[1].differs->total == 2);
    CHECK(r.groups[1].differs->first == ".y");
    // Within a tolerance the struct's doubles agree.
    CHECK(compare_samples({of(0, point(1, 2.5, "2.5")), of(1, point(1, 2.5000001, "2.5000001"))}, tolerance{1e-3, 0})
              .groups.size() == 1);
}

TEST_CASE("compare: containers of another length differ by length and their extra elements", "[compare]") {
    auto r = compare_samples({of(0, array({1, 2, 3})), of(1, array({1, 2, 3})), of(2, array({1, 2, 3, 4}))}, {});
    REQUIRE(r.groups.size() == 2);
    REQUIRE(r.groups[1].differs);
    CHECK(r.groups[1].differs->lengths == std::make_pair(std::size_t{4}, std::size_t{3}));
    CHECK(r.groups[1].differs->differing == 1);
    CHECK(r.groups[1].differs->first == "[3]");
}

TEST_CASE("compare: members that cannot evaluate are grouped by reason, after the values", "[compare]") {
    auto r = compare_samples({of(0, integer(4)), failed(1, "No symbol \"x\" in current context."),
                              failed(2, "No symbol \"x\" in current context."),
                              failed(3, "Cannot access memory at address 0x0")},
                             {});
    REQUIRE(r.groups.size() == 1);
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].reason == "not in scope");
    CHECK(r.errors[0].members == std::vector<int>{1, 2});
    CHECK(r.errors[1].reason == "cannot access memory");
    CHECK(r.errors[1].message == "Cannot access memory at address 0x0");
    CHECK_FALSE(r.all_equal());   // --expect-equal fails when a member has no value
    REQUIRE(r.stats);
    CHECK(r.stats->count == 1);
}

TEST_CASE("compare: error reasons are short, and unknown messages stay as they are", "[compare]") {
    CHECK(error_reason("No symbol \"resid\" in current context.") == "not in scope");
    CHECK(error_reason("value has been optimized out") == "optimized out");
    CHECK(error_reason("Cannot access memory at address 0x10") == "cannot access memory");
    CHECK(error_reason("exited(0)") == "exited(0)");
    CHECK(error_reason("Division by zero") == "Division by zero");
}

TEST_CASE("compare: one value everywhere is all_equal", "[compare]") {
    auto r = compare_samples({of(0, integer(1)), of(1, integer(1))}, {});
    CHECK(r.all_equal());
    CHECK(compare_samples({}, {}).all_equal());
}
