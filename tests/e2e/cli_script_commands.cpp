// gdb's command language and everyday commands, against gdb 13 on the same binary: define
// with $argc/$argN, document and help, if/else, while with loop_break/loop_continue,
// source (-v, errors in nested files), bad input (end at top level, recursion, a missing
// file), shell and ! with $_shell_exitcode, and the convenience variables $_exitcode,
// $_, $__, $bpnum, $_thread. Scripts are -x files: gdb reads bodies only from a file.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_common.hpp"
#include "daily_common.hpp"
#include "interactive_pty.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

struct both {
    run_result ours, theirs;
};

/// `-x SCRIPT` then `extra` -ex commands, on `program`, in ompdbg and in gdb; the script
/// file is named the same for both (errors name it).
both run_script(const std::string& text, const std::string& program, const std::vector<std::string>& extra = {}) {
    daily::scratch_dir dir;
    const std::string script = (dir.path() / "script.gdb").string();
    std::ofstream(script) << text;
    std::vector<std::string> args{"-x", script};
    auto ex = ex_args(extra);
    args.insert(args.end(), ex.begin(), ex.end());
    args.push_back(program);
    auto ours = ompdbg_batch(args, run_options().timeout_after(60s));
    args.insert(args.end() - 1, "--args");
    auto theirs = gdb_batch(args, run_options().timeout_after(60s));
    return {ours, theirs};
}

/// The debugger's own lines, without the program's and with the scratch directory masked.
std::string shown(const std::string& out, const std::vector<std::string>& program_lines = {}) {
    std::string text = joined(debugger_lines(out, program_lines));
    static const std::regex scratch("/[^ :]*ompdbg-daily-[A-Za-z0-9]+/");
    return std::regex_replace(text, scratch, "DIR/");
}

void check_same(const both& r, const std::vector<std::string>& program_lines = {}) {
    INFO("ompdbg stdout:\n" << r.ours.out << "\nompdbg stderr:\n" << r.ours.err);
    INFO("gdb stdout:\n" << r.theirs.out << "\ngdb stderr:\n" << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.term_signal == 0);
    CHECK(shown(r.ours.out, program_lines) == shown(r.theirs.out, program_lines));
}

/// stderr without ompdbg's batch summary ("ompdbg: command 'X' failed") and gdb's
/// libthread_db chatter.
std::string errors(const std::string& err) {
    std::vector<std::string> keep;
    for (const auto& l : lines_of(err)) {
        if (l.rfind("ompdbg: command", 0) != 0 && l.find("libthread_db") == std::string::npos) {
            keep.push_back(l);
        }
    }
    static const std::regex scratch("/[^ :]*ompdbg-daily-[A-Za-z0-9]+/");
    return std::regex_replace(joined(keep), scratch, "DIR/");
}

}  // namespace

TEST_CASE("define with $argc and $argN, document, help, if/else and while with loop_break and loop_continue "
          "print what gdb prints",
          "[cli][script][gdb-compare]") {
    auto r = run_script(R"(define foo
  echo argc=$argc\n
  if $argc > 1
    echo two: $arg0 $arg1\n
  else
    echo one: $arg0\n
  end
end
document foo
Print args.
Second line.
end
foo a
foo a "b c"
help foo
set $i = 0
while $i < 6
  set $i = $i + 1
  if $i == 2
    loop_continue
  end
  if $i == 5
    loop_break
  end
  echo i=
  output $i
  echo \n
end
set $n = 0
while $n < 2
  set $m = 0
  while $m < 2
    printf "%d%d\n", $n, $m
    set $m = $m + 1
  end
  set $n = $n + 1
end
show user foo
foo
echo not reached\n
)",
                        example_path("structs"));
    check_same(r);
    CHECK(errors(r.ours.err) == errors(r.theirs.err));
    CHECK(has_line(r.ours.out, "two: a \"b c\""));
    CHECK(r.ours.err.find("Missing argument 0 in user function.") != std::string::npos);
    CHECK(r.ours.exit_code == 1);
}

TEST_CASE("user commands and if/while use the program's variables, in breakpoint commands too, as in gdb",
          "[cli][script][gdb-compare]") {
    auto program = example_path("structs");
    auto r = run_script(R"(define show_n
  if n > 2
    printf "big %d\n", n
  else
    printf "small %d\n", n
  end
end
break factorial
commands
  silent
  show_n
  if n == 2
    echo two\n
  end
  continue
end
run
)",
                        program);
    check_same(r, program_output(program));
    CHECK(has_line(r.ours.out, "small 2"));
}

TEST_CASE("source runs a file, source -v traces it, and an error stops the file with gdb's FILE:LINE message",
          "[cli][script][gdb-compare]") {
    daily::scratch_dir dir;
    const std::string inner = (dir.path() / "inner.gdb").string();
    std::ofstream(inner) << "echo in-inner\\n\nif 1\necho nested\\n\nend\nfrobnicate\necho not reached\\n\n";
    const std::string traced = (dir.path() / "traced.gdb").string();
    std::ofstream(traced) << "echo a\\n\nif 1\necho b\\n\nend\ndefine f\necho c\\n\nend\nf\n";
    auto r = run_script("source -v " + traced + "\necho outer\\n\nsource " + inner + "\necho after\\n\n",
                        example_path("structs"));
    check_same(r);
    CHECK(errors(r.ours.err) == errors(r.theirs.err));
    CHECK(has_line(r.ours.out, "++echo b\\n"));
    CHECK(r.ours.out.find("after") == std::string::npos);
}

TEST_CASE("bad input in scripts: end at the top level, a missing file, documenting a built-in, argument-less "
          "commands and a user command calling itself answer one line as gdb",
          "[cli][script][gdb-compare]") {
    auto program = example_path("structs");
    for (const std::string& bad :
         {std::string("end\n"), std::string("source /nonexistent/file.gdb\necho goes on\\n\n"),
          std::string("document echo\n"), std::string("document no_such_command\n"), std::string("define\n"),
          std::string("if\n"), std::string("while\n"), std::string("source\n"),
          std::string("define rec\nrec\nend\nrec\necho not reached\\n\n"),
          std::string("define unterminated\necho u\\n\n"), std::string("while 1\necho once\\n\nloop_break\n")}) {
        INFO("script:\n" << bad);
        auto r = run_script(bad, program, {"echo next\\n"});
        check_same(r);
        CHECK(errors(r.ours.err) == errors(r.theirs.err));
        CHECK(lines_of(errors(r.ours.err)).size() <= 2);
    }
}

TEST_CASE("hook-stop runs at every stop before it is shown, hook-CMD and hookpost-CMD around CMD, and "
          "max-user-call-depth ends a deep recursion, as in gdb",
          "[cli][script][gdb-compare]") {
    auto program = example_path("structs");
    auto r = run_script(R"(define hook-stop
echo [hook-stop]\n
end
define hook-echo
printf "pre-echo\n"
end
define hookpost-echo
printf "post-echo\n"
end
echo hello\n
break factorial
run
next
define foo
echo foo\n
end
define hook-foo
echo hook-foo\n
end
foo
define foo
echo foo2\n
end
foo
define hook-nosuch
echo x\n
end
define nosuch
echo nosuch\n
end
nosuch
show max-user-call-depth
set max-user-call-depth 3
show max-user-call-depth
set $d = 0
define r1
set $d = $d + 1
printf "depth %d\n", $d
r1
end
r1
echo not reached\n
)",
                        program);
    check_same(r, program_output(program));
    CHECK(errors(r.ours.err) == errors(r.theirs.err));
    CHECK(has_line(r.ours.out, "[hook-stop]"));
    CHECK(has_line(r.ours.out, "hook-foo"));
    CHECK(has_line(r.ours.out, "depth 3"));
    CHECK_FALSE(has_line(r.ours.out, "depth 4"));
    CHECK(has_line(r.ours.err, "Max user call depth exceeded -- command aborted."));
}

TEST_CASE("a failing hook: hook-stop's error is told and the stop goes on, hook-CMD's aborts CMD, a failed CMD "
          "runs no hookpost, bad max-user-call-depth values are refused",
          "[cli][script][gdb-compare]") {
    auto program = example_path("structs");
    for (const std::string& script :
         {std::string("define hook-stop\nnosuchcmd\nend\nbreak factorial\nrun\nnext\necho after\\n\n"),
          std::string("define hook-echo\nnosuch2\nend\necho not-shown\\n\n"),
          std::string("define hookpost-print\necho post\\n\nend\nprint 1\nprint nosuch\n"),
          std::string("set max-user-call-depth\n"), std::string("set max-user-call-depth -1\n"),
          std::string("set max-user-call-depth 5x\n"),
          std::string("set max-user-call-depth 0\nshow max-user-call-depth\nset max-user-call-depth unlimited\n"
                      "show max-user-call-depth\n")}) {
        INFO("script:\n" << script);
        auto r = run_script(script, program);
        check_same(r, program_output(program));
        CHECK(errors(r.ours.err) == errors(r.theirs.err));
    }
}

TEST_CASE("define-prefix makes a prefix for define NAME SUB, lists its subcommands alone, keeps them when NAME gets a "
          "body, and refuses built-ins and unknown prefixes as gdb",
          "[cli][script][gdb-compare]") {
    auto program = example_path("structs");
    const std::string defs = "define-prefix abc\ndefine abc xyz\necho in-xyz $arg0\\n\nend\n";
    for (const std::string& script :
         {defs + "abc xyz 1\nabc\necho next\\n\ndefine abc\necho abc-itself\\n\nend\nabc\nabc xyz 2\n"
                 "define-prefix abc\ndefine-prefix abc xyz\ndefine abc xyz deep\necho deep\\n\nend\n"
                 "abc xyz deep\ndefine-prefix a-b\ndefine-prefix echo\n",
          defs + "abc nosuch\n", std::string("define nope sub\n"), defs + "define abc nope sub\n",
          std::string("define-prefix\n")}) {
        INFO("script:\n" << script);
        auto r = run_script(script, program);
        check_same(r);
        CHECK(errors(r.ours.err) == errors(r.theirs.err));
    }
}

TEST_CASE("shell and ! print in order with ompdbg's output and set $_shell_exitcode and $_shell_exitsignal as gdb",
          "[cli][script][gdb-compare]") {
    auto r = run_script("echo a\\n\nshell echo from-shell\n!echo bang\nprint $_shell_exitcode\nshell exit 3\n"
                        "print $_shell_exitcode\nprint $_shell_exitsignal\nshell kill -TERM $$\n"
                        "print $_shell_exitcode\nprint $_shell_exitsignal\necho b\\n\n",
                        example_path("structs"));
    check_same(r);
    CHECK(lines_of(r.ours.out) ==
          std::vector<std::string>{"a", "from-shell", "bang", "$1 = 0", "$2 = 3", "$3 = void", "$4 = void",
                                   "$5 = 15", "b"});
}

TEST_CASE("$_exitcode, $_ and $__ after x, $bpnum and $_thread hold what gdb's hold", "[cli][script][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"print $_exitcode", "print $bpnum", "print $_thread", "break factorial", "run",
                               "print $bpnum", "print $_thread", "x/4xw global_array", "print $_", "print $__",
                               "x/2xg global_array", "print $_", "print $__", "x/3c global_buffer", "print $_",
                               "print $__", "x/2dh global_array", "print $_", "print $__", "x/s global_buffer",
                               "print $_", "print $__", "tbreak main", "print $bpnum", "delete", "continue",
                               "print $_exitcode", "print $_thread"});
}

TEST_CASE("output, echo, tbreak, until LOCATION and advance LOCATION print what gdb prints", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    int loop = example_line("structs.c", "loop_body");
    int after = example_line("structs.c", "after_loop");
    REQUIRE(loop > 0);
    compare_with_gdb(program, {"tbreak main", "run", "info breakpoints", "output global_counter", "echo \\n",
                               "output/x global_array", "echo \\n", "echo a\\tb \\\\ c\\n", "output global_point",
                               "echo \\n", "advance factorial", "bt", "until " + std::to_string(after),
                               "advance " + std::to_string(loop), "until", "tbreak structs.c:" + std::to_string(after),
                               "continue", "info breakpoints"});
}

TEST_CASE("interactive: define, if and while read their bodies at gdb's > prompts, and shell output comes in order",
          "[cli][script][interactive]") {
    daily::scratch_dir home;
    pty_session t({example_path("structs")}, {{"HOME", home.path().string()}, {"NO_COLOR", "1"}});
    const std::regex prompt(R"(\(ompdbg\) $)");
    REQUIRE(t.wait_for(prompt));
    t.type("define twice\r");
    REQUIRE(t.wait_for(std::regex("Type commands for definition of \"twice\".\\s+End with a line saying just "
                                  "\"end\".\\s+>$")));
    t.type("echo [$arg0]\\n\r");
    REQUIRE(t.wait_for(std::regex(">$")));
    t.type("if $argc > 1\r");
    REQUIRE(t.wait_for(std::regex(" >$")));   // one blank more inside the nested block
    t.type("echo [$arg1]\\n\r");
    REQUIRE(t.wait_for(std::regex(" >$")));
    t.type("end\r");
    REQUIRE(t.wait_for(std::regex(">$")));
    t.type("end\r");
    REQUIRE(t.wait_for(prompt));
    t.type("twice a b\r");
    auto out = t.wait_for(prompt);
    INFO(t.last_unmatched());
    REQUIRE(out);
    CHECK(out->find("[a]") != std::string::npos);
    CHECK(out->find("[b]") != std::string::npos);
    t.type("set $i = 0\r");
    REQUIRE(t.wait_for(prompt));
    t.type("while $i < 2\r");
    REQUIRE(t.wait_for(std::regex(" >$")));
    t.type("set $i = $i + 1\r");
    REQUIRE(t.wait_for(std::regex(" >$")));
    t.type("shell echo sh$((1+1))\r");
    REQUIRE(t.wait_for(std::regex(" >$")));
    t.type("end\r");
    out = t.wait_for(prompt);
    REQUIRE(out);
    const bool twice_in_order = out->find("sh2\r\nsh2") != std::string::npos || out->find("sh2\nsh2") != std::string::npos;
    CHECK(twice_in_order);
    t.type("break factorial\r");
    REQUIRE(t.wait_for(prompt));
    t.type("commands\r");
    REQUIRE(t.wait_for(std::regex("Type commands for breakpoint\\(s\\) 1, one per line.\\s+End with a line saying "
                                  "just \"end\".\\s+>$")));
    t.type("if 1\r");
    REQUIRE(t.wait_for(std::regex(" >$")));
    t.type("end\r");
    REQUIRE(t.wait_for(std::regex(">$")));
    t.type("end\r");
    REQUIRE(t.wait_for(prompt));
    t.type("print $_shell_exitcode\r");
    out = t.wait_for(prompt);
    REQUIRE(out);
    CHECK(out->find("= 0") != std::string::npos);
}
