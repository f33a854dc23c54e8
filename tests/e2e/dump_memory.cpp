// dump / append [binary] memory|value: the files ompdbg writes hold the same bytes as the
// files gdb writes for the same ranges of the same stopped program, and bad input gets
// gdb's error words.

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace ompdbg::test;

namespace {

/// The same commands through `ompdbg --batch -ex ...` or `gdb -nx -batch -ex ...`.
run_result batch(bool gdb, const std::string& program, const std::vector<std::string>& cmds) {
    std::vector<std::string> argv;
    if (gdb) {
        argv = {"gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off"};
    }
    for (const auto& c : cmds) {
        argv.push_back("-ex");
        argv.push_back(c);
    }
    argv.push_back(program);
    auto opts = run_options().timeout_after(std::chrono::seconds(60));
    return gdb ? run(argv, opts) : ompdbg_batch(argv, opts);
}

/// The line of structs.c that carries `LINE-MARK: area_of_body`.
int area_of_body_line() {
    std::ifstream in(std::string(examples_source_dir) + "/structs.c");
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (text.find("LINE-MARK: area_of_body") != std::string::npos) {
            return n;
        }
    }
    return 0;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        char tmpl[] = "/tmp/ompdbg-dump-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("dump memory and dump value write the bytes gdb writes", "[cli][dump]") {
    const std::string program = std::string(examples_dir) + "/structs";
    const std::string at = "structs.c:" + std::to_string(area_of_body_line());
    temp_dir dir;
    auto commands = [&](const std::string& who) {
        auto f = [&](const char* name) { return (dir.path / (who + "." + name)).string(); };
        return std::vector<std::string>{
            "break " + at,
            "run",
            "dump memory " + f("array") + " &global_array[0] &global_array[5]",
            "dump binary memory " + f("buffer") + " global_buffer global_buffer+32",
            "dump value " + f("point") + " global_point",
            "dump binary value " + f("counter") + " global_counter",
            "dump memory " + f("append") + " &global_counter ((char*)&global_counter)+4",
            "append memory " + f("append") + " &global_array[1] &global_array[3]",
        };
    };
    auto gdb = batch(true, program, commands("gdb"));
    auto ours = batch(false, program, commands("ompdbg"));
    INFO("gdb:\n" << gdb.all() << "\nompdbg:\n" << ours.all());
    REQUIRE(ours.ok());
    for (const char* name : {"array", "buffer", "point", "counter", "append"}) {
        CAPTURE(name);
        auto theirs = slurp(dir.path / (std::string("gdb.") + name));
        REQUIRE(!theirs.empty());
        CHECK(slurp(dir.path / (std::string("ompdbg.") + name)) == theirs);
    }
    // Ground truth from the program's source: int global_array[5] = {1, 2, 3, 4, 5}.
    auto array = slurp(dir.path / "ompdbg.array");
    REQUIRE(array.size() == 5 * sizeof(int));
    int values[5];
    std::memcpy(values, array.data(), sizeof values);
    CHECK(values[0] == 1);
    CHECK(values[4] == 5);
}

TEST_CASE("dump rejects bad input with gdb's words", "[cli][dump]") {
    const std::string program = std::string(examples_dir) + "/structs";
    temp_dir dir;
    const std::string file = (dir.path / "x").string();
    std::vector<std::string> cmds{"break main", "run", "dump memory", "dump memory " + file,
                                  "dump memory " + file + " &global_counter",
                                  "dump memory " + file + " &global_array[3] &global_array[1]",
                                  "dump memory /nonexistent-dir/x &global_array[0] &global_array[1]",
                                  "dump memory " + file + " 0 16"};
    auto ours = batch(false, program, cmds);
    auto gdb = batch(true, program, cmds);
    INFO("gdb:\n" << gdb.all() << "\nompdbg:\n" << ours.all());
    CHECK(!ours.ok());   // batch mode: failing commands make the exit status non-zero
    for (const char* msg : {"Missing filename.", "Missing start address.", "Missing stop address.",
                            "Invalid memory address range (start >= end).", "Cannot access memory at address 0x0"}) {
        CAPTURE(msg);
        CHECK(gdb.all().find(msg) != std::string::npos);
        CHECK(ours.all().find(msg) != std::string::npos);
    }
    CHECK(ours.all().find("/nonexistent-dir/x: No such file or directory.") != std::string::npos);
}
