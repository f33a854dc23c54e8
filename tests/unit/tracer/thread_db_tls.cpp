// tracer::thread_db (glibc libthread_db with our proc_service callbacks) on a real
// multi-threaded process: TLS addresses, pthread_t and pthread key values of every thread
// equal what each thread printed about itself.

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>

#include "ompdbg/tracer/thread_db.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "unwinder_test_support.hpp"

using namespace ompdbg;
using namespace ompdbg::test;

namespace {

std::string tracer_target(const std::string& name) {
    return std::string(targets_dir) + "/tracer/" + name;
}

/// st_value of `name` in `path` as binutils' nm prints it (for a TLS symbol: its offset in
/// the module's TLS block).
std::uint64_t nm_value(const std::string& path, const std::string& name) {
    auto r = run({"nm", path});
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string value, type, sym;
        if (l >> value >> type >> sym && sym == name) {
            return std::stoull(value, nullptr, 16);
        }
    }
    FAIL("nm: no symbol " << name << " in " << path);
    return 0;
}

struct printed {
    int index;
    std::uint64_t tls_var, tls_addr, self, key, keyval, lib_addr;
};

std::map<pid_t, printed> read_report(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    std::map<pid_t, printed> out;
    std::regex re(R"(tls index=(\d+) lwp=(\d+) tls_var=(\d+) &tls_var=(0x[0-9a-f]+) self=(0x[0-9a-f]+) key=(\d+) keyval=(0x[0-9a-f]+) &lib_tls=(\S+))");
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, re)) {
            printed p{};
            p.index = std::stoi(m[1]);
            p.tls_var = std::stoull(m[3]);
            p.tls_addr = std::stoull(m[4], nullptr, 16);
            p.self = std::stoull(m[5], nullptr, 16);
            p.key = std::stoull(m[6]);
            p.keyval = std::stoull(m[7], nullptr, 16);
            p.lib_addr = m[8] == "(nil)" ? 0 : std::stoull(m[8], nullptr, 16);
            out[static_cast<pid_t>(std::stol(m[2]))] = p;
        }
    }
    return out;
}

class temp_file {
public:
    explicit temp_file(const std::string& stem)
        : path_((std::filesystem::temp_directory_path() /
                 (stem + "." + std::to_string(::getpid()) + "." + std::to_string(counter_++)))
                    .string()) {}
    ~temp_file() { std::filesystem::remove(path_); }
    const std::string& path() const { return path_; }

private:
    static inline int counter_ = 0;
    std::string path_;
};

const tracer::loaded_module* module_named(tracer::target& tgt, const std::string& path) {
    for (auto& m : tgt.modules()) {
        if (std::filesystem::equivalent(m.path, path)) {
            return &m;
        }
    }
    return nullptr;
}

}  // namespace

TEST_CASE("thread_db finds every thread's __thread variables, pthread_t and key values", "[tracer][thread_db]") {
    auto variant = GENERATE(as<std::string>{}, "tls_threads-gcc-dwarf5-O0", "tls_threads-clang-dwarf4-O2",
                            "tls_threads-gcc-dwarf4-O2", "tls_threads-clang-dwarf5-O0");
    auto path = tracer_target(variant);
    auto lib = tracer_target("tls_lib-gcc-dwarf5-O0");
    INFO(path);
    temp_file out("tls_threads");
    auto proc = launch_traced(path, {lib}, out.path());
    run_to_breakpoint(*proc, nm_value(path, "stop_here"));

    auto report = read_report(out.path());
    REQUIRE(report.size() == 5);
    std::string why;
    auto db = tracer::thread_db::open(*proc, &why);
    INFO(why);
    REQUIRE(db);

    const auto* exe = module_named(*proc, path);
    const auto* libmod = module_named(*proc, lib);
    REQUIRE(exe);
    REQUIRE(libmod);
    auto tls_off = nm_value(path, "tls_var");
    auto lib_off = nm_value(lib, "lib_tls");
    REQUIRE(proc->threads().size() == 5);
    for (auto* thread : proc->threads()) {
        pid_t tid = thread->tid();
        REQUIRE(report.count(tid));
        const auto& p = report[tid];
        INFO("thread index " << p.index << " lwp " << tid);
        auto addr = db->tls_address(tid, *exe, tls_off);
        CHECK(addr == p.tls_addr);
        CHECK(proc->read<int>(virt_addr(addr)) == 100 + p.index);
        CHECK(db->tls_address(tid, *libmod, lib_off) == p.lib_addr);
        CHECK(proc->read<int>(virt_addr(p.lib_addr)) == 200 + p.index);
        CHECK(db->pthread_self(tid) == p.self);
        CHECK(db->tsd(tid, static_cast<unsigned>(p.key)) == p.keyval);
    }
}

TEST_CASE("thread_db reports a clear error for a module that is not loaded or a thread it does not know", "[tracer][thread_db]") {
    auto path = tracer_target("tls_threads");
    temp_file out("tls_threads");
    auto proc = launch_traced(path, {}, out.path());
    run_to_breakpoint(*proc, nm_value(path, "stop_here"));
    auto db = tracer::thread_db::open(*proc);
    REQUIRE(db);
    tracer::loaded_module ghost;
    ghost.path = "/nonexistent/libghost.so";
    ghost.load_bias = 0x12345000;
    CHECK_THROWS_WITH(db->tls_address(proc->pid(), ghost, 0),
                      Catch::StartsWith("Cannot find thread-local storage for LWP"));
    const auto* exe = module_named(*proc, path);
    REQUIRE(exe);
    CHECK_THROWS_WITH(db->tls_address(999999, *exe, 0), Catch::Contains("999999"));
    CHECK_FALSE(db->pthread_self(999999));
}

TEST_CASE("thread_db cannot open before libc is loaded and says why", "[tracer][thread_db]") {
    auto proc = launch_traced(tracer_target("tls_threads"), {});
    std::string why;
    auto db = tracer::thread_db::open(*proc, &why);   // stopped at exec: only ld.so is mapped
    CHECK_FALSE(db);
    CHECK_THAT(why, Catch::StartsWith("libthread_db: "));
}
