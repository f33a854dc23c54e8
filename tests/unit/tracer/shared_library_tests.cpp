// Shared libraries: r_debug/link_map through the loader breakpoint, modules() vs /proc maps.

#include "tracer_test_helpers.hpp"

#include <algorithm>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {
// Files mapped by the process according to /proc/PID/maps (ground truth).
std::vector<std::string> mapped_files(pid_t pid) {
    std::vector<std::string> out;
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    for (std::string line; std::getline(in, line);) {
        auto slash = line.find('/');
        if (slash != std::string::npos) {
            std::string f = line.substr(slash);
            if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
        }
    }
    return out;
}

bool maps_contain(const std::vector<std::string>& files, const std::filesystem::path& p) {
    auto canon = std::filesystem::canonical(p).string();
    return std::find(files.begin(), files.end(), canon) != files.end();
}
}  // namespace

TEST_CASE("a dlopen'ed library is reported as a library event and listed in modules()", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_dlopen"), {}, opts);
    // At the exec stop: the executable first (its bias agrees with /proc maps) and ld.so.
    REQUIRE(p->modules().size() >= 1);
    CHECK(p->modules().front().is_executable);
    CHECK(std::filesystem::equivalent(p->modules().front().path, program("tracer_dlopen")));
    virt_addr before(exe_bias(*p) + nm_address(program("tracer_dlopen"), "before_dlopen"));
    p->add_breakpoint_site(before);

    // Start-up: libc is loaded before main.
    p->resume();
    auto r = wait_stop(*p, 20000, true);
    REQUIRE(r.kind == stop_kind::library_event);
    auto has = [&](const char* part) {
        return std::any_of(p->modules().begin(), p->modules().end(),
                           [&](auto& m) { return m.path.string().find(part) != std::string::npos; });
    };
    CHECK(has("libc.so"));
    CHECK_FALSE(has("libm.so"));
    CHECK_FALSE(has("vdso"));
    p->resume();
    r = wait_stop(*p, 20000, true);
    REQUIRE(r.kind == stop_kind::breakpoint);
    CHECK_FALSE(has("libm.so"));
    // dlopen("libm.so.6"): one more library event with libm in the list.
    bool saw_libm = false;
    for (int i = 0; i < 10 && !saw_libm; ++i) {
        p->resume();
        r = wait_stop(*p, 20000, true);
        REQUIRE(r.kind == stop_kind::library_event);
        saw_libm = has("libm.so");
    }
    REQUIRE(saw_libm);
    // Every module is a file the process maps, its range inside the mapping, and the
    // executable comes first.
    auto files = mapped_files(p->pid());
    CHECK(p->modules().front().is_executable);
    for (auto& m : p->modules()) {
        INFO(m.path);
        CHECK(maps_contain(files, m.path));
        CHECK(m.start < m.end);
        CHECK(m.start <= m.l_ld);
        CHECK(m.l_ld < m.end);
        CHECK(p->module_at(virt_addr(m.l_ld)) == &m);
        // link_map_addr points at this module's struct link_map: its l_ld matches.
        REQUIRE(m.link_map_addr != 0);
        CHECK(p->read<std::uint64_t>(virt_addr(m.link_map_addr + 16)) == m.l_ld);
    }
    p->resume();
    r = wait_stop(*p);
    CHECK(r.kind == stop_kind::exited);
    CHECK(out.contents() == "cos(0)=1\n");
}

TEST_CASE("attaching reads the shared-library list at once", "[tracer]") {
    ompdbg::test::background_process prog({program("tracer_counter")});
    REQUIRE(prog.wait_for_line(std::regex("^count 1$"), std::chrono::seconds(10)));
    auto p = process::attach(prog.pid());
    auto files = mapped_files(prog.pid());
    REQUIRE(p->modules().size() >= 3);   // exe, libc, ld.so
    CHECK(p->modules().front().is_executable);
    for (auto& m : p->modules()) {
        INFO(m.path);
        CHECK(maps_contain(files, m.path));
    }
    p->detach();
}
