// User-command arguments as gdb splits and substitutes them (cli-script.c user_args and
// insert_user_defined_cmd_args).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "command_block.hpp"
#include "ompdbg/base/error.hpp"

using ompdbg::app::split_user_args;
using ompdbg::app::substitute_args;

TEST_CASE("split_user_args splits at blanks outside quotes and keeps quotes and escapes", "[app][script]") {
    CHECK(split_user_args("") == std::vector<std::string>{});
    CHECK(split_user_args("  a   b\tc ") == std::vector<std::string>{"a", "b", "c"});
    CHECK(split_user_args("\"b c\" 'd e' f\\ g") == std::vector<std::string>{"\"b c\"", "'d e'", "f\\ g"});
    CHECK(split_user_args("x[1] *p") == std::vector<std::string>{"x[1]", "*p"});
}

TEST_CASE("substitute_args replaces $argc and $argN and leaves other $arg words alone", "[app][script]") {
    std::vector<std::string> args{"one", "two"};
    CHECK(substitute_args("echo $argc $arg0 $arg1\\n", args) == "echo 2 one two\\n");
    CHECK(substitute_args("print $argument + $arg", args) == "print $argument + $arg");
    CHECK(substitute_args("print $arg10", std::vector<std::string>(11, "v")) == "print v");
    CHECK_THROWS_WITH(substitute_args("echo $arg2", args), "Missing argument 2 in user function.");
    CHECK(substitute_args("no args here", {}) == "no args here");
}
