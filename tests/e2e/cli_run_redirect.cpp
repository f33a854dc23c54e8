// `run ARGS < IN > OUT 2> ERR` and `set args` with redirections, which gdb's shell carries
// out: the program reads and writes the same files under ompdbg as under gdb, a quoted `<`
// stays an argument, `run` alone keeps the last redirections, and --args words are never
// redirections.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "cli_common.hpp"
#include "daily_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

std::string redirect_program() {
    return std::string(targets_dir) + "/app/app_redirect-gcc-dwarf5-O0";
}

std::string contents(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The files each tool's program wrote for `commands` (FILE in them: a file of the run's
/// own directory), in a fixed order.
std::string files_after(bool gdb, const std::vector<std::string>& commands) {
    daily::scratch_dir dir;
    std::ofstream(dir.path() / "in.txt") << "a\nb\nc\n";
    std::vector<std::string> cmds;
    for (std::string c : commands) {
        for (std::size_t at; (at = c.find("FILE")) != std::string::npos;) {
            c.replace(at, 4, dir.path().string() + "/");
        }
        cmds.push_back(c);
    }
    auto r = gdb ? gdb_cmds(redirect_program(), cmds) : ompdbg_cmds(redirect_program(), cmds);
    INFO((gdb ? "gdb" : "ompdbg") << ":\n" << r.all());
    CHECK_FALSE(r.timed_out);
    std::string out;
    for (const char* name : {"out.txt", "err.txt"}) {
        out += std::string("== ") + name + "\n" + contents(dir.path() / name);
    }
    return out;
}

}  // namespace

TEST_CASE("run with < > 2> >> and 2>&1 redirects the program's streams as gdb's shell does", "[cli]") {
    const std::vector<std::vector<std::string>> scripts = {
        {"run x < FILEin.txt > FILEout.txt 2>FILEerr.txt"},
        {"run '<' y >>FILEout.txt 2>&1", "run z >> FILEout.txt"},
        {"set args q <FILEin.txt >FILEout.txt", "run", "run"},
        {"run \\>not-a-file > FILEout.txt 2> FILEerr.txt", "show args"},
    };
    for (const auto& script : scripts) {
        INFO(script.front());
        std::string theirs = files_after(true, script);
        std::string ours = files_after(false, script);
        CHECK(ours == theirs);
        CHECK(ours.find("argc=") != std::string::npos);
    }
}

TEST_CASE("run's redirections: --args words never redirect, a missing file name is one line, show args keeps "
          "them as typed",
          "[cli]") {
    auto args = ompdbg_batch({"-ex", "show args", "-ex", "run", "--args", redirect_program(), "<", "x", "a>b"},
                             run_options().timeout_after(60s));
    INFO(args.all());
    CHECK(args.out.find("is \"\\< x a\\>b\".") != std::string::npos);
    CHECK(args.out.find("argc=4 lines=0") != std::string::npos);
    CHECK(args.out.find("arg a>b") != std::string::npos);

    auto missing = ompdbg_cmds(redirect_program(), {"run x >", "show args"});
    INFO(missing.all());
    CHECK(missing.err.find("Missing file name after `>'.") != std::string::npos);
    CHECK(missing.out.find("argc=") == std::string::npos);   // nothing started
    CHECK_FALSE(missing.timed_out);
}
