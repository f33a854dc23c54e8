// split_trailing_clause (base/text.hpp): the `thread N` and `rank LIST` clauses at the end of
// a breakpoint's location, as the regular expression `^(.*?)\s*\bKEYWORD\s+(\S+)$` that it
// replaced splits them (checked against std::regex on the same inputs).
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "ompdbg/base/text.hpp"

using ompdbg::split_trailing_clause;

TEST_CASE("a trailing `thread N` or `rank LIST` is split off the location", "[app][text]") {
    auto t = split_trailing_clause("foo.c:12 thread 2", "thread");
    REQUIRE(t);
    CHECK(t->before == "foo.c:12");
    CHECK(t->token == "2");
    auto r = split_trailing_clause("main  rank\t0-3", "rank");
    REQUIRE(r);
    CHECK(r->before == "main");
    CHECK(r->token == "0-3");
    auto only = split_trailing_clause("thread 3", "thread");
    REQUIRE(only);
    CHECK(only->before.empty());
    CHECK_FALSE(split_trailing_clause("foothread 3", "thread"));    // not a word of its own
    CHECK_FALSE(split_trailing_clause("foo thread", "thread"));     // no number
    CHECK_FALSE(split_trailing_clause("foo thread 3 ", "thread"));  // a blank after it
    CHECK_FALSE(split_trailing_clause("foo thread 3 4", "thread"));
    CHECK_FALSE(split_trailing_clause("", "thread"));
}

TEST_CASE("split_trailing_clause answers as the regular expression it replaced", "[app][text]") {
    const std::vector<std::string> pieces = {"thread", "rank", " ", "\t", "1", "x", ".", "_", "foo", "-", "3"};
    for (const char* keyword : {"thread", "rank"}) {
        const std::regex re(std::string(R"(^(.*?)\s*\b)") + keyword + R"(\s+(\S+)$)");
        // Every sequence of up to four pieces.
        std::vector<std::string> inputs = {""};
        for (int len = 0; len < 4; ++len) {
            std::vector<std::string> next;
            for (const auto& s : inputs) {
                for (const auto& p : pieces) {
                    next.push_back(s + p);
                }
            }
            inputs.insert(inputs.end(), next.begin(), next.end());
        }
        for (const auto& in : inputs) {
            std::smatch m;
            const bool matched = std::regex_match(in, m, re);
            auto split = split_trailing_clause(in, keyword);
            INFO("keyword " << keyword << ", input \"" << in << "\"");
            REQUIRE(split.has_value() == matched);
            if (matched) {
                CHECK(split->before == m[1].str());
                CHECK(split->token == m[2].str());
            }
        }
    }
}
