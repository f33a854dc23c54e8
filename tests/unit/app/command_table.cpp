// The command table: exact names, gdb aliases, unique prefixes, ambiguity, prefix commands.
#include <catch2/catch.hpp>

#include <string>

#include "command_table.hpp"
#include "ompdbg/base/error.hpp"

using ompdbg::app::command;
using ompdbg::app::command_table;

namespace {

command make(std::string name, std::vector<std::string> aliases = {}) {
    command c;
    c.name = std::move(name);
    c.aliases = std::move(aliases);
    c.summary = "summary of " + c.name;
    return c;
}

/// A table with gdb's names and aliases for the commands whose prefixes collide.
command_table gdb_like_table() {
    command_table t;
    t.add(make("break", {"b", "br", "bre", "brea"}));
    t.add(make("backtrace", {"bt", "where"}));
    t.add(make("continue", {"c", "cont"}));
    t.add(make("condition"));
    t.add(make("commands"));
    t.add(make("next", {"n"}));
    t.add(make("nexti", {"ni"}));
    t.add(make("step", {"s"}));
    t.add(make("stepi", {"si"}));
    t.add(make("start"));
    t.add(make("finish", {"fin"}));
    t.add(make("frame", {"f"}));
    t.add(make("until", {"u"}));
    t.add(make("up"));
    t.add(make("print", {"p"}));
    t.add(make("ptype"));
    t.add(make("tbreak", {"tb"}));
    t.add(make("thread", {"t"}));
    t.add(make("quit", {"q"}));
    t.add(make("kill", {"k"}));
    return t;
}

}  // namespace

TEST_CASE("command_table finds commands by exact name", "[cli]") {
    auto t = gdb_like_table();
    REQUIRE(t.find("break") != nullptr);
    CHECK(t.find("break")->name == "break");
    // "next" is also a prefix of "nexti": the exact name wins.
    CHECK(t.find("next")->name == "next");
    CHECK(t.find("step")->name == "step");
}

TEST_CASE("command_table resolves gdb's aliases", "[cli]") {
    auto t = gdb_like_table();
    CHECK(t.find("b")->name == "break");
    CHECK(t.find("br")->name == "break");
    CHECK(t.find("c")->name == "continue");
    CHECK(t.find("n")->name == "next");
    CHECK(t.find("s")->name == "step");
    CHECK(t.find("si")->name == "stepi");
    CHECK(t.find("ni")->name == "nexti");
    CHECK(t.find("p")->name == "print");
    CHECK(t.find("bt")->name == "backtrace");
    CHECK(t.find("where")->name == "backtrace");
    CHECK(t.find("fin")->name == "finish");
    CHECK(t.find("u")->name == "until");
    CHECK(t.find("q")->name == "quit");
    CHECK(t.find("k")->name == "kill");
    CHECK(t.find("tb")->name == "tbreak");
}

TEST_CASE("command_table accepts a unique prefix", "[cli]") {
    auto t = gdb_like_table();
    CHECK(t.find("brea")->name == "break");
    CHECK(t.find("backt")->name == "backtrace");
    CHECK(t.find("cond")->name == "condition");
    CHECK(t.find("comm")->name == "commands");
    CHECK(t.find("fini")->name == "finish");
    CHECK(t.find("pty")->name == "ptype");
    CHECK(t.find("qui")->name == "quit");
}

TEST_CASE("command_table rejects an ambiguous prefix naming the candidates", "[cli]") {
    auto t = gdb_like_table();
    try {
        t.find("co");
        FAIL("no error for an ambiguous prefix");
    } catch (const ompdbg::error& e) {
        CHECK(std::string(e.what()) == "Ambiguous command \"co\": commands, condition, continue.");
    }
    CHECK_THROWS_AS(t.find("st"), ompdbg::error);   // start, step, stepi
}

TEST_CASE("command_table returns nullptr for an unknown word", "[cli]") {
    auto t = gdb_like_table();
    CHECK(t.find("foo") == nullptr);
    CHECK(t.find("") == nullptr);
    CHECK(t.find("breakx") == nullptr);
}

TEST_CASE("command_table prefix commands collect subcommands from several groups", "[cli]") {
    command_table t;
    auto& info = t.prefix("info", {"i"}, "Generic command for showing things.");
    info.add(make("breakpoints", {"b"}));
    // A second group asks for the same prefix and adds to it.
    auto& again = t.prefix("info", {"inf"});
    again.add(make("registers", {"r"}));
    again.add(make("threads"));
    REQUIRE(&info == &again);
    const command* c = t.find("i");
    REQUIRE(c != nullptr);
    REQUIRE(c->subcommands);
    CHECK(c->subcommands->find("b")->name == "breakpoints");
    CHECK(c->subcommands->find("r")->name == "registers");
    CHECK(c->subcommands->find("thr")->name == "threads");
    CHECK(t.find("inf")->name == "info");
}

TEST_CASE("command_table add keeps the subcommands of an existing prefix", "[cli]") {
    command_table t;
    t.prefix("thread", {"t"}).add(make("apply"));
    command with_handler = make("thread", {"t"});
    with_handler.handler = [](ompdbg::app::session&, std::string_view) {};
    t.add(with_handler);
    const command* c = t.find("thread");
    REQUIRE(c != nullptr);
    CHECK(static_cast<bool>(c->handler));
    REQUIRE(c->subcommands);
    CHECK(c->subcommands->find("apply") != nullptr);
}
