// Corrupt DWARF and ELF never crash or hang the debugger: byte-mutated copies of an example
// (elf_mutator.hpp: a few bytes of .debug_*, the symbol tables or the section headers
// changed, from a fixed seed) go through the CLI on a core of the original program:
// break, list, ptype, info functions, bt. Each run may print errors; none may die of a
// signal, trip a sanitizer, or run past its time limit.
//
// OMPDBG_MUTATED_COPIES=N and OMPDBG_MUTATION_SEED=S run more copies or other seeds when
// hunting (the suite runs the default 200 from seed 1).

#include "daily_common.hpp"
#include "elf_mutator.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <future>
#include <mutex>

using namespace ompdbg::test;
using namespace ompdbg::test::daily;

namespace {

std::vector<unsigned char> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::filesystem::path& p, const std::vector<unsigned char>& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

/// What went wrong in one run, or "" when it ended by itself without a sanitizer report.
std::string failure_of(const run_result& r) {
    if (r.timed_out) {
        return "hang (killed after the time limit)";
    }
    if (r.term_signal != 0) {
        return fmt::format("killed by signal {}", r.term_signal);
    }
    for (const char* report : {"ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"}) {
        if (r.err.find(report) != std::string::npos) {
            return report;
        }
    }
    return {};
}

struct variant {
    std::string program;
    std::filesystem::path core;
    std::vector<unsigned char> bytes;
};

/// Copies [first, first + count) of the 200 (seeds first_seed + i) through the CLI; with
/// OMPDBG_MUTATED_COPIES set, part 0 runs that many and the other parts nothing.
void check_mutated_copies(std::uint64_t part, std::uint64_t parts) {
    scratch_dir dir;
    // gcc with DWARF 5 and clang with DWARF 4: different forms (strx/line_strp vs strp,
    // ref4 vs ref_addr...), each with a core of its own unmutated build.
    std::vector<variant> variants;
    for (auto [cc, dw] : {std::pair<const char*, int>{"gcc", 5}, {"clang", 4}}) {
        auto program = example_path("crash", cc, dw);
        auto sub = dir.path() / cc;
        std::filesystem::create_directories(sub);
        auto core = make_crash_core(program, {"segv"}, sub);
        variants.push_back({program, core, read_file(program)});
        REQUIRE_FALSE(variants.back().bytes.empty());
    }
    const bool hunting = std::getenv("OMPDBG_MUTATED_COPIES") != nullptr;
    if (hunting && part != 0) {
        return;
    }
    const std::uint64_t total = env_number("OMPDBG_MUTATED_COPIES", 200);
    const std::uint64_t first = hunting ? 0 : total * part / parts;
    const std::uint64_t copies = hunting ? total : total * (part + 1) / parts;
    const std::uint64_t first_seed = env_number("OMPDBG_MUTATION_SEED", 1);
    const std::vector<std::string> cmds{"break main", "list main", "ptype struct point", "info functions",
                                        "bt"};

    // The unmutated programs answer every command: what the copies are compared against.
    for (const auto& v : variants) {
        auto args = ex_args(cmds);
        args.insert(args.end(), {"core", v.program, v.core.string()});
        auto r = ompdbg_batch(args, run_options().timeout_after(30s));
        INFO(r.all());
        CHECK(r.out.find("type = struct point {") != std::string::npos);
        CHECK(r.out.find("#0  ") != std::string::npos);
        CHECK(r.out.find("Breakpoint 1 at ") != std::string::npos);
    }

    std::mutex failures_lock;
    std::vector<std::string> failures;
    auto one_copy = [&](std::uint64_t i) {
        const auto& v = variants[i % variants.size()];
        std::uint64_t seed = first_seed + i;
        auto changes = plan_mutation(v.bytes, seed);
        auto copy = dir.path() / fmt::format("copy-{}", i);
        write_file(copy, apply_mutation(v.bytes, changes));
        auto args = ex_args(cmds);
        args.insert(args.end(), {"core", copy.string(), v.core.string()});
        auto r = ompdbg_batch(args, run_options().timeout_after(30s));
        std::filesystem::remove(copy);
        if (auto why = failure_of(r); !why.empty()) {
            std::lock_guard lock(failures_lock);
            failures.push_back(fmt::format("seed {} ({} with {}): {}\n{}", seed, v.program, describe_mutation(changes),
                                           why, r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0)));
        }
    };
    // Two copies at a time: the machine has two cores.
    for (std::uint64_t i = first; i < copies; i += 2) {
        auto second = std::async(std::launch::async, [&, i] {
            if (i + 1 < copies) {
                one_copy(i + 1);
            }
        });
        one_copy(i);
        second.get();
    }
    INFO(failures.size() << " of " << copies - first << " copies failed:\n" << joined(failures));
    CHECK(failures.empty());
}

}  // namespace

// 200 copies in four parts of 50 (seeds 1-50, 51-100, ...): parallel ctest spreads them, and
// each part keeps its own time limit on a loaded machine.
TEST_CASE("200 byte-mutated copies of an example never crash or hang the CLI, part 1 of 4", "[cli][fuzz]") {
    check_mutated_copies(0, 4);
}
TEST_CASE("200 byte-mutated copies of an example never crash or hang the CLI, part 2 of 4", "[cli][fuzz]") {
    check_mutated_copies(1, 4);
}
TEST_CASE("200 byte-mutated copies of an example never crash or hang the CLI, part 3 of 4", "[cli][fuzz]") {
    check_mutated_copies(2, 4);
}
TEST_CASE("200 byte-mutated copies of an example never crash or hang the CLI, part 4 of 4", "[cli][fuzz]") {
    check_mutated_copies(3, 4);
}

// Issue 17 item 7: a struct member whose DW_AT_type names an offset outside its unit (a
// byte-mutated copy of examples/crash kept in tests/fuzz_regressions/elf_dwarf) made
// `ptype struct point` follow a DIE that was never read and die in libdw. gdb reports the
// reference and goes on; so must we, with the same words.
TEST_CASE("ptype of a member whose type reference leads outside its unit says so as gdb does", "[cli][fuzz]") {
    auto program = std::filesystem::path(fuzz_regressions_dir) / "elf_dwarf" / "crash-member-type-ref-outside-unit";
    REQUIRE(std::filesystem::exists(program));
    const std::vector<std::string> cmds{"ptype struct point", "print sizeof(struct point)", "whatis (struct point *)0"};
    auto ours_args = ex_args(cmds);
    ours_args.push_back(program.string());
    auto ours = ompdbg_batch(ours_args, run_options().timeout_after(30s));
    INFO(ours.all());
    CHECK(failure_of(ours).empty());
    auto gdb_args = ex_args(cmds);
    gdb_args.push_back(program.string());
    auto gdb = gdb_batch(gdb_args, run_options().timeout_after(60s));
    INFO(gdb.all());
    // gdb's own line for this corruption, on its stderr as ours.
    CHECK_THAT(gdb.err, Catch::Contains("invalid dwarf2 offset 0xffff00"));
    CHECK_THAT(ours.err, Catch::Contains("invalid dwarf2 offset 0xffff00"));
    // The session goes on: the next commands answer.
    CHECK_THAT(ours.out, Catch::Contains("$1 = 8"));
    CHECK_THAT(ours.out, Catch::Contains("type = struct point *"));
}
