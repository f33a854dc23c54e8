// gdb's symbol listings (issue 17, item 8): info functions, info variables, info types and
// info sources with their -q / -n flags and regular expressions, compared with gdb 13 on
// the same binaries (C and optimised C++), their --json form, and corrupt inputs.
#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("info functions, variables, types and sources list a C program as gdb does", "[cli][gdb-compare]") {
    auto program = GENERATE(example_path("structs"), example_path("structs", "clang", 4, 0));
    compare_with_gdb(program, {"info functions fact", "info functions", "info variables", "info types",
                               "info sources", "info functions -n", "info functions -q fact", "info types Pt",
                               "info variables -n glob", "info types point", "info functions ^ma[a-z]*$",
                               "info variables -q -n counter", "info sources -basename structs",
                               "info sources nomatch"});
}

TEST_CASE("info functions, variables and types list optimised C++ as gdb does", "[cli][gdb-compare]") {
    // Demangled names with parameters, methods of a header's class, typedefs inside class
    // templates, the outlined OpenMP body, and file blocks sorted by name.
    compare_with_gdb(example_path("omp_vector_inline"),
                     {"info functions -n mesh", "info functions -n ^main", "info types mesh", "info types -q ^mesh$",
                      "info variables -n", "info types allocator_traits", "info functions -n _omp_fn"});
    compare_with_gdb(example_path("cxx_std"), {"info functions -n circle", "info types shape", "info variables -n"});
}

TEST_CASE("info functions --json gives the symbols and the non-debugging symbols as data", "[cli][json]") {
    auto r = ompdbg_batch({"--json", "-ex", "info functions fact", "-ex", "info variables -n global_c",
                           example_path("structs")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    REQUIRE(r.ok());
    std::vector<nlohmann::json> objects;
    for (const auto& l : lines_of(r.out)) {
        objects.push_back(nlohmann::json::parse(l));
    }
    REQUIRE(objects.size() == 2);
    const auto& fns = objects[0].at("result").at("symbols");
    REQUIRE(fns.size() == 1);
    CHECK(fns[0].at("name") == "factorial");
    CHECK(fns[0].at("declaration") == "long factorial(int);");
    CHECK(fns[0].at("line") == example_line("structs.c", "factorial_base") - 2);
    CHECK(fns[0].at("static") == false);
    CHECK(objects[0].at("result").at("non_debugging").is_array());
    const auto& vars = objects[1].at("result").at("symbols");
    REQUIRE(vars.size() == 2);   // global_counter, global_color
    CHECK(objects[1].at("result").at("non_debugging").empty());
}

TEST_CASE("info functions and info types on a large C++ binary print what gdb prints", "[cli]") {
    // ompdbg itself (tens of thousands of DIEs, a unit built from relative paths); gdb on
    // the same binary. Speed is bench/run's business, not a test's.
    const std::string big = ompdbg_binary;
    auto ours = ompdbg_batch({"-ex", "info functions -n ^ompdbg::app::run_cli", "-ex", "info types -q ^ompdbg::app::session$",
                              big},
                             run_options().timeout_after(120s));
    auto theirs = gdb_batch({"-ex", "info functions -n ^ompdbg::app::run_cli", "-ex", "info types -q ^ompdbg::app::session$",
                             big},
                            run_options().timeout_after(300s));
    INFO(ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE(ours.ok());
    CHECK(ours.out.find("ompdbg::app::run_cli(int, char**);") != std::string::npos);
    CHECK(joined(lines_of(ours.out)) == joined(lines_of(theirs.out)));
}

TEST_CASE("symbol listings on truncated and corrupted binaries never crash", "[cli]") {
    auto name = GENERATE(as<std::string>{}, "structs-truncated-half", "structs-corrupt-shdr", "structs-corrupt-dwarf",
                         "structs-stripped");
    std::string path = std::string(examples_dir) + "/" + name;
    auto r = ompdbg_cmds(path, {"info functions", "info variables ma", "info types", "info sources", "info line main",
                                "info line structs.c:80"});
    INFO(path << "\n" << r.all());
    CHECK_FALSE(r.timed_out);
    CHECK(r.term_signal == 0);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
}
