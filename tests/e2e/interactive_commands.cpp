// The command table as a user meets it: `help` and `help COMMAND` for every command it
// lists, gdb's aliases and unique prefixes giving the same answers as the full names, and
// `list` in its forms compared with gdb's on the same binary.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("help COMMAND describes every command that help lists, sub-commands included", "[cli][interactive]") {
    auto all = ompdbg_cmds(example_path("structs"), {"help"});
    REQUIRE(all.ok());
    // "break, b, br -- Set breakpoint at specified location."
    const std::regex row(R"(^([a-z][a-z0-9-]*)(, [^ ]+)* -- (.+)$)");
    std::vector<std::string> names;
    std::vector<std::string> summaries;
    for (auto& l : lines_of(all.out)) {
        std::smatch m;
        if (std::regex_match(l, m, row)) {
            names.push_back(m[1]);
            summaries.push_back(m[3]);
        }
    }
    REQUIRE(names.size() >= 30);
    for (const char* must : {"break", "run", "next", "step", "list", "print", "backtrace", "watch", "file", "help"}) {
        CHECK(std::find(names.begin(), names.end(), must) != names.end());
    }
    std::vector<std::string> cmds;
    for (auto& n : names) {
        cmds.push_back("help " + n);
    }
    auto each = ompdbg_cmds(example_path("structs"), cmds);
    INFO(each.all());
    CHECK(each.ok());
    for (std::size_t i = 0; i < names.size(); ++i) {
        INFO(names[i]);
        CHECK(has_line(each.out, summaries[i]));
    }
    // A prefix command lists its sub-commands, each of which has its own help.
    auto info = ompdbg_cmds(example_path("structs"), {"help info", "help info breakpoints", "help info registers"});
    INFO(info.all());
    CHECK(info.ok());
    CHECK(info.out.find("List of info subcommands:") != std::string::npos);
    CHECK(info.out.find("info watchpoints -- ") != std::string::npos);
    auto bad = ompdbg_cmds(example_path("structs"), {"help nosuchcommand"});
    CHECK(has_line(bad.err, "Undefined command: \"nosuchcommand\".  Try \"help\"."));
}

TEST_CASE("gdb's aliases and unique prefixes run the same commands", "[cli][interactive]") {
    auto full = ompdbg_cmds(example_path("structs"), {"break factorial", "run", "print n", "next", "step",
                                                      "backtrace", "info registers rip", "continue"});
    auto aliases = ompdbg_cmds(example_path("structs"), {"b factorial", "r", "p n", "n", "s", "bt", "i r rip", "c"});
    // ("prin" is ambiguous in gdb 13 as here: print, print-object, printf.)
    auto prefixes = ompdbg_cmds(example_path("structs"), {"brea factorial", "ru", "print n", "next", "step", "backt",
                                                         "inf registers rip", "cont"});
    auto where = ompdbg_cmds(example_path("structs"), {"break factorial", "run", "print n", "next", "step", "where",
                                                       "info registers rip", "continue"});
    INFO(full.all());
    REQUIRE(full.ok());
    CHECK(full.out.find("$1 = 5") != std::string::npos);
    CHECK(aliases.out == full.out);
    CHECK(prefixes.out == full.out);
    CHECK(where.out == full.out);
    // As in gdb, a prefix of two names is ambiguous.
    auto ambiguous = ompdbg_cmds(example_path("structs"), {"nex"});
    CHECK(has_line(ambiguous.err, "Ambiguous command \"nex\": next, nexti."));
}

TEST_CASE("list around a line, a function, FILE:LINE, and continuing, as gdb lists", "[cli][interactive]") {
    std::vector<std::string> cmds{"list factorial", "list", "list structs.c:120", "list", "list 10,12"};
    auto ours = ompdbg_cmds(example_path("structs"), cmds);
    auto gdb = gdb_cmds(example_path("structs"), cmds);
    INFO(ours.all());
    INFO(gdb.all());
    CHECK(ours.out == gdb.out);
    // Around the current line when stopped, and the source line shown at each stop.
    std::vector<std::string> stop{"break factorial", "run", "list", "next"};
    auto ours_stop = ompdbg_cmds(example_path("structs"), stop);
    auto gdb_stop = gdb_cmds(example_path("structs"), stop);
    INFO(ours_stop.all());
    INFO(gdb_stop.all());
    auto prog = program_output(example_path("structs"));
    CHECK(joined(debugger_lines(ours_stop.out, prog)) == joined(debugger_lines(gdb_stop.out, prog)));
}
