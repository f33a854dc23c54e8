// The OMPD host against a real OpenMP process under ptrace and the real libompd: our
// callbacks called the way libompd calls them (with bad input too), and the inquiries
// checked against what the program prints about itself, readelf and /proc.

#include <omp-tools.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "run_to_symbol.hpp"

namespace fs = std::filesystem;
using namespace ompdbg;
using namespace ompdbg::plugins;

using ompdbg::test::readelf_symbol;

namespace {

const std::string runtime_dir = std::string(ompdbg::test::cache_dir) + "/llvm-openmp-19.1.7/lib";

std::string example(const std::string& name) {
    return std::string(ompdbg::test::examples_dir) + "/openmp/" + name;
}

struct temp_out {
    fs::path path = fs::temp_directory_path() / ("ompdbg-ompd-" + std::to_string(::getpid()) + ".out");
    ~temp_out() {
        std::error_code ec;
        fs::remove(path, ec);
    }
    std::string contents() const {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

const tracer::loaded_module* module_named(tracer::target& t, const std::string& prefix) {
    for (const auto& m : t.modules()) {
        if (m.path.filename().string().rfind(prefix, 0) == 0) {
            return &m;
        }
    }
    return nullptr;
}

/// Runs `program` with OMP_DEBUG=enabled to its first omp_checkpoint() call.
std::unique_ptr<tracer::process> run_to_checkpoint(const std::string& program, const temp_out& out,
                                                   std::vector<std::string> env = {"OMP_DEBUG=enabled"}) {
    tracer::launch_options opts;
    opts.env = std::move(env);
    opts.stdout_path = out.path;
    auto p = tracer::process::launch(program, {}, opts);
    ompdbg::test::run_to_symbol(*p, program, "omp_checkpoint");
    return p;
}

bool have_examples() {
    if (!fs::exists(example("omp_nested"))) {
        WARN("skipped: examples/openmp not built (run scripts/bootstrap)");
        return false;
    }
    return true;
}

}  // namespace

TEST_CASE("the runtime probe finds libomp's OMPD symbols and the library it names", "[ompd]") {
    if (!have_examples()) {
        return;
    }
    temp_out out;
    auto p = run_to_checkpoint(example("omp_nested"), out);
    auto probe = probe_openmp_runtime(*p);
    CHECK(probe.what == omp_runtime_probe::kind::llvm_ompd);
    CHECK(probe.debug_enabled);
    CHECK(probe.problem.empty());
    CHECK(fs::canonical(probe.runtime_path) == fs::canonical(runtime_dir + "/libomp.so"));
    REQUIRE_FALSE(probe.dll_locations.empty());
    CHECK(fs::path(probe.dll_locations.front()).filename() == "libompd.so");
    // Event addresses are the runtime's local symbols (readelf) plus its load bias.
    auto valid = readelf_symbol(runtime_dir + "/libomp.so", "ompd_bp_parallel_begin");
    REQUIRE(valid);
    CHECK(probe.event_addresses.at("ompd_bp_parallel_begin").addr() == *valid + probe.load_bias);
    CHECK(probe.event_addresses.count("ompd_dll_locations_valid") == 1);

    auto lib = load_ompd_library(probe, plugin_policy{}, std::nullopt);
    CHECK(fs::canonical(lib->path()) == fs::canonical(runtime_dir + "/libompd.so"));
}

TEST_CASE("the OMPD callbacks answer as the spec says, bad input included", "[ompd]") {
    if (!have_examples()) {
        return;
    }
    temp_out out;
    auto p = run_to_checkpoint(example("omp_nested"), out);
    auto lib = ompd_library::load(runtime_dir + "/libompd.so", plugin_policy{});
    ompd_address_space as(lib, *p, nullptr);
    auto* cb = static_cast<const ompd_callbacks_t*>(ompd_address_space::callbacks_for_testing());
    auto* ctx = static_cast<ompd_address_space_context_t*>(as.context_for_testing());
    const tracer::loaded_module* libomp = module_named(*p, "libomp.so");
    REQUIRE(libomp != nullptr);

    SECTION("sizeof_type gives the LP64 sizes") {
        ompd_device_type_sizes_t sizes{};
        REQUIRE(cb->sizeof_type(ctx, &sizes) == ompd_rc_ok);
        CHECK(sizes.sizeof_char == 1);
        CHECK(sizes.sizeof_short == 2);
        CHECK(sizes.sizeof_int == 4);
        CHECK(sizes.sizeof_long == 8);
        CHECK(sizes.sizeof_long_long == 8);
        CHECK(sizes.sizeof_pointer == 8);
        CHECK(cb->sizeof_type(ctx, nullptr) == ompd_rc_bad_input);
        int not_a_context = 0;
        CHECK(cb->sizeof_type(reinterpret_cast<ompd_address_space_context_t*>(&not_a_context), &sizes) ==
              ompd_rc_stale_handle);
    }
    SECTION("symbol_addr_lookup finds local .symtab symbols, honouring the file-name hint") {
        auto value = readelf_symbol(runtime_dir + "/libomp.so", "ompd_sizeof__kmp_info_t");
        REQUIRE(value);
        ompd_address_t a{};
        REQUIRE(cb->symbol_addr_lookup(ctx, nullptr, "ompd_sizeof__kmp_info_t", &a, nullptr) == ompd_rc_ok);
        CHECK(a.address == *value + libomp->load_bias);
        REQUIRE(cb->symbol_addr_lookup(ctx, nullptr, "ompd_sizeof__kmp_info_t", &a, "libomp.so") == ompd_rc_ok);
        CHECK(a.address == *value + libomp->load_bias);
        CHECK(cb->symbol_addr_lookup(ctx, nullptr, "ompd_sizeof__kmp_info_t", &a, "libc.so.6") == ompd_rc_error);
        CHECK(cb->symbol_addr_lookup(ctx, nullptr, "no_such_symbol_anywhere", &a, nullptr) == ompd_rc_error);
        CHECK(cb->symbol_addr_lookup(ctx, nullptr, nullptr, &a, nullptr) == ompd_rc_bad_input);
        CHECK(cb->symbol_addr_lookup(ctx, nullptr, "ompd_state", nullptr, nullptr) == ompd_rc_bad_input);
    }
    SECTION("symbol_addr_lookup gives each thread its own __kmp_gtid (TLS)") {
        std::set<int> gtids;
        int main_gtid = -1;
        for (tracer::thread* t : p->threads()) {
            ompd_thread_context_t* tc = nullptr;
            std::int64_t lwp = t->tid();
            REQUIRE(cb->get_thread_context_for_thread_id(ctx, 1, sizeof lwp, &lwp, &tc) == ompd_rc_ok);
            ompd_address_t a{};
            REQUIRE(cb->symbol_addr_lookup(ctx, tc, "__kmp_gtid", &a, nullptr) == ompd_rc_ok);
            int gtid = -1;
            REQUIRE(cb->read_memory(ctx, tc, &a, sizeof gtid, &gtid) == ompd_rc_ok);
            gtids.insert(gtid);
            if (t->tid() == p->pid()) {
                main_gtid = gtid;
            }
        }
        // 6 threads, 6 distinct global thread ids; the initial thread is gtid 0 (libomp
        // keeps 1..8 for its hidden helper threads, so workers count from 9).
        CHECK(gtids.size() == 6);
        CHECK(main_gtid == 0);
        CHECK(*gtids.begin() == 0);
    }
    SECTION("read_memory, read_string and write_memory") {
        auto value = readelf_symbol(runtime_dir + "/libomp.so", "ompd_state");
        REQUIRE(value);
        ompd_address_t a{0, *value + libomp->load_bias};
        std::uint64_t state = 0;
        REQUIRE(cb->read_memory(ctx, nullptr, &a, sizeof state, &state) == ompd_rc_ok);
        CHECK(state != 0);  // OMP_DEBUG=enabled
        ompd_address_t zero{0, 0};
        CHECK(cb->read_memory(ctx, nullptr, &zero, 8, &state) == ompd_rc_error);
        CHECK(cb->read_memory(ctx, nullptr, nullptr, 8, &state) == ompd_rc_bad_input);
        // The first string ompd_dll_locations points at, whole and truncated.
        auto locs = readelf_symbol(runtime_dir + "/libomp.so", "ompd_dll_locations");
        REQUIRE(locs);
        ompd_address_t la{0, *locs + libomp->load_bias};
        std::uint64_t array = 0, first = 0;
        REQUIRE(cb->read_memory(ctx, nullptr, &la, 8, &array) == ompd_rc_ok);
        ompd_address_t aa{0, array};
        REQUIRE(cb->read_memory(ctx, nullptr, &aa, 8, &first) == ompd_rc_ok);
        ompd_address_t sa{0, first};
        char buf[256] = {};
        REQUIRE(cb->read_string(ctx, nullptr, &sa, sizeof buf, buf) == ompd_rc_ok);
        CHECK(fs::path(buf).filename() == "libompd.so");
        char small[4] = {};
        CHECK(cb->read_string(ctx, nullptr, &sa, sizeof small, small) == ompd_rc_incomplete);
        CHECK(cb->read_string(ctx, nullptr, &zero, sizeof buf, buf) == ompd_rc_error);
        // write_memory round trip on ompd_state (restored afterwards).
        std::uint64_t v = state;
        REQUIRE(cb->write_memory(ctx, nullptr, &a, sizeof v, &v) == ompd_rc_ok);
        CHECK(cb->write_memory(ctx, nullptr, &zero, sizeof v, &v) == ompd_rc_error);
    }
    SECTION("device_to_host and host_to_device copy (same byte order)") {
        std::uint32_t in[3] = {1, 2, 0xdeadbeef}, outv[3] = {};
        REQUIRE(cb->device_to_host(ctx, in, 4, 3, outv) == ompd_rc_ok);
        CHECK(std::memcmp(in, outv, sizeof in) == 0);
        REQUIRE(cb->host_to_device(ctx, outv, 4, 3, in) == ompd_rc_ok);
        CHECK(cb->device_to_host(ctx, nullptr, 4, 3, outv) == ompd_rc_bad_input);
        // A unit is a basic type of 1 to 8 bytes: a library's bogus unit size is refused,
        // not taken as a byte count to copy (found by fuzz/ompd.cpp).
        CHECK(cb->device_to_host(ctx, in, 3, 1, outv) == ompd_rc_bad_input);
        CHECK(cb->host_to_device(ctx, in, 0xca710acd29d1dc84ull, 1, outv) == ompd_rc_bad_input);
        CHECK(cb->device_to_host(ctx, in, 0, 3, outv) == ompd_rc_bad_input);
        CHECK(std::memcmp(in, outv, sizeof in) == 0);
    }
    SECTION("get_thread_context_for_thread_id maps LWPs and pthread_t, rejects the rest") {
        ompd_thread_context_t* tc = nullptr;
        std::int64_t lwp = p->pid();
        CHECK(cb->get_thread_context_for_thread_id(ctx, 1, sizeof lwp, &lwp, &tc) == ompd_rc_ok);
        std::int32_t lwp32 = p->pid();
        ompd_thread_context_t* tc32 = nullptr;
        CHECK(cb->get_thread_context_for_thread_id(ctx, 1, sizeof lwp32, &lwp32, &tc32) == ompd_rc_ok);
        CHECK(tc32 == tc);
        std::int64_t nobody = 999999;
        CHECK(cb->get_thread_context_for_thread_id(ctx, 1, sizeof nobody, &nobody, &tc) == ompd_rc_unavailable);
        CHECK(cb->get_thread_context_for_thread_id(ctx, 1, 3, &lwp, &tc) == ompd_rc_bad_input);
        CHECK(cb->get_thread_context_for_thread_id(ctx, 7, sizeof lwp, &lwp, &tc) == ompd_rc_unsupported);
        CHECK(cb->get_thread_context_for_thread_id(ctx, 1, sizeof lwp, &lwp, nullptr) == ompd_rc_bad_input);
    }
    SECTION("alloc_memory and free_memory") {
        void* mem = nullptr;
        REQUIRE(cb->alloc_memory(64, &mem) == ompd_rc_ok);
        CHECK(mem != nullptr);
        CHECK(cb->free_memory(mem) == ompd_rc_ok);
        CHECK(cb->alloc_memory(64, nullptr) == ompd_rc_bad_input);
        CHECK(cb->print_string("hello from a test", 0) == ompd_rc_ok);
        CHECK(cb->print_string(nullptr, 0) == ompd_rc_bad_input);
    }
}

TEST_CASE("OMPD sees the nested regions, team sizes and thread numbers the program printed", "[ompd]") {
    if (!have_examples()) {
        return;
    }
    temp_out out;
    auto p = run_to_checkpoint(example("omp_nested"), out);
    auto lib = ompd_library::load(runtime_dir + "/libompd.so", plugin_policy{});
    ompd_address_space as(lib, *p, nullptr);
    auto text = out.contents();
    INFO(text);
    // Ground truth: "truth: checkpoint level=2 team_size=3 outer_team_size=2 ...".
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex(R"(checkpoint level=(\d+) team_size=(\d+) outer_team_size=(\d+))")));
    const int level = std::stoi(m[1]), team = std::stoi(m[2]), outer_team = std::stoi(m[3]);

    auto me = as.thread_of(p->pid());
    REQUIRE(me);
    CHECK(as.os_thread_of(*me) == p->pid());
    CHECK(as.state_name(as.state(*me).first) == "ompt_state_work_parallel");
    CHECK(as.icv_number(*me, "thread-num-var") == 0);
    auto inner = as.current_parallel(*me);
    REQUIRE(inner);
    CHECK(as.icv_number(*inner, "levels-var") == level);
    CHECK(as.icv_number(*inner, "team-size-var") == team);
    auto outer = as.enclosing_parallel(*inner);
    REQUIRE(outer);
    CHECK(as.icv_number(*outer, "levels-var") == level - 1);
    CHECK(as.icv_number(*outer, "team-size-var") == outer_team);
    // Every member of the inner team is an OS thread of the process, numbered 0..team-1.
    std::set<pid_t> members;
    for (int k = 0; k < team; ++k) {
        auto t = as.thread_in_parallel(*inner, k);
        REQUIRE(t);
        auto lwp = as.os_thread_of(*t);
        REQUIRE(lwp);
        CHECK(p->find_thread(*lwp) != nullptr);
        CHECK(as.icv_number(*t, "thread-num-var") == k);
        members.insert(*lwp);
    }
    CHECK(members.size() == static_cast<std::size_t>(team));
    // All 6 OS threads are OpenMP threads (ground truth: /proc/PID/task).
    std::size_t tasks = 0;
    for (auto& e : fs::directory_iterator("/proc/" + std::to_string(p->pid()) + "/task")) {
        (void)e;
        ++tasks;
    }
    CHECK(tasks == 6);
    for (tracer::thread* t : p->threads()) {
        CHECK(as.thread_of(t->tid()).has_value());
    }
    // The implicit task of the inner region runs the outlined function of omp_nested.c.
    auto task = as.current_task(*me);
    REQUIRE(task);
    CHECK(as.icv_number(*task, "implicit-task-var") == 1);
    CHECK(as.task_function(*task).value_or(0) != 0);
    // Handles compare equal when they name the same region.
    auto again = as.current_parallel(*me);
    REQUIRE(again);
    CHECK(as.same(*inner, *again));
    CHECK_FALSE(as.same(*inner, *outer));
}

TEST_CASE("without OMP_DEBUG the probe says how to enable OMPD", "[ompd]") {
    if (!have_examples()) {
        return;
    }
    temp_out out;
    auto p = run_to_checkpoint(example("omp_nested"), out, {});
    auto probe = probe_openmp_runtime(*p);
    CHECK(probe.what == omp_runtime_probe::kind::llvm_ompd);
    CHECK_FALSE(probe.debug_enabled);
    CHECK_THAT(probe.problem, Catch::Contains("OMP_DEBUG=enabled"));
}

TEST_CASE("the probe names GNU libgomp and Debian's stripped libomp", "[ompd]") {
    if (!have_examples()) {
        return;
    }
    {
        temp_out out;
        auto p = run_to_checkpoint(example("omp_nested_libgomp"), out);
        auto probe = probe_openmp_runtime(*p);
        CHECK(probe.what == omp_runtime_probe::kind::gnu_libgomp);
        CHECK_THAT(probe.problem, Catch::Contains("GNU libgomp"));
    }
    if (fs::exists(example("omp_nested_debian_libomp"))) {
        temp_out out;
        auto p = run_to_checkpoint(example("omp_nested_debian_libomp"), out);
        auto probe = probe_openmp_runtime(*p);
        CHECK(probe.what == omp_runtime_probe::kind::llvm_without_ompd);
        CHECK_THAT(probe.problem, Catch::Contains("/usr/lib/llvm-19/lib/libomp.so.5 has no OMPD support"));
        CHECK_THAT(probe.problem, Catch::Contains("ompd_dll_locations"));
    }
}

TEST_CASE("a host-only runtime announces no device, and ompd_device_initialize answers as the plugin does",
          "[ompd]") {
    if (!have_examples()) {
        return;
    }
    temp_out out;
    auto p = run_to_checkpoint(example("omp_nested"), out);
    auto probe = probe_openmp_runtime(*p);
    // Ground truth: the runtime's symbol table.
    bool has_device_event = readelf_symbol(runtime_dir + "/libomp.so", "ompd_bp_device_begin").has_value();
    CHECK(probe.event_addresses.count("ompd_bp_device_begin") == (has_device_event ? 1u : 0u));
    auto lib = ompd_library::load(runtime_dir + "/libompd.so", plugin_policy{});
    ompd_address_space as(lib, *p, nullptr);
    // OMPD_DEVICE_KIND_HOST (1), a device the runtime never announced: no address space.
    int rc = as.initialize_device(1, 0);
    CHECK(rc != 0);
    CHECK_THAT(ompd_rc_name(rc), Catch::Matches("ompd_rc_[a-z_]+"));
    // The process address space is still usable afterwards.
    CHECK(as.thread_of(p->pid()).has_value());
}
