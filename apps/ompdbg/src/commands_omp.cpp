// omp info / threads / parallel / tasks / icvs and the OMPD settings: the OpenMP view of the
// selected process through LLVM's libompd, printed (libdebugger's omp/ompd_views reads it).
// `omp bt` is in commands_omp_bt.cpp, `catch omp` and the runtime watch in
// commands_omp_events.cpp.

#include "commands_omp.hpp"
#include "command_args.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "commands_omp_state.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::app {

namespace omp_impl {

std::string thread_label(session& s, std::optional<pid_t> lwp) {
    if (!lwp) {
        return "?";
    }
    int n = s.thread_number(*lwp);
    return n > 0 ? std::to_string(n) : "?";
}

std::string opt_num(std::optional<std::int64_t> v) {
    return v ? std::to_string(*v) : "-";
}
}  // namespace omp_impl

using namespace omp_impl;

namespace {

// ---- omp info ----------------------------------------------------------------------

void cmd_omp_info(session& s, std::string_view) {
    std::string runtime = openmp_runtime_path(s);
    if (!runtime.empty()) {
        s.out().line("OpenMP runtime:      " + runtime);
    }
    ompd_library_info lib = ompd_library_of(s);
    s.out().line("OMPD library:        " + lib.path);
    s.out().line("Found:               " + lib.found);
    s.out().line("OMPD API version:    " + std::to_string(lib.api_version));
    s.out().line("OMPD version string: " + lib.version_string);
    if (lib.omp_version) {
        s.out().line("OpenMP version:      " + std::to_string(*lib.omp_version));
    }
    s.out().field("runtime", runtime);
    s.out().field("library", lib.path);
    s.out().field("found", lib.found);
    s.out().field("api_version", lib.api_version);
    s.out().field("version_string", lib.version_string);
}

// ---- omp devices ----------------------------------------------------------------

void cmd_omp_devices(session& s, std::string_view) {
    omp_devices_info d = omp_devices(s);
    s.out().line("Device 0: host (initial device), the address space of process " + std::to_string(d.pid));
    if (d.offload_announced) {
        s.out().line("Offload devices: the runtime announces them at ompd_bp_device_begin; ompdbg debugs the "
                     "host device only.");
    } else {
        s.out().line("No offload devices: " + d.runtime_path +
                     " defines no ompd_bp_device_begin (a host-only runtime).");
    }
    s.out().field("devices", nlohmann::json::array({{{"number", 0}, {"kind", "host"}}}));
    s.out().field("offload_devices_announced", d.offload_announced);
}

// ---- omp threads -------------------------------------------------------------------

nlohmann::json opt_json(std::optional<std::int64_t> v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

void cmd_omp_threads(session& s, std::string_view) {
    std::vector<omp_thread_row> threads = omp_thread_rows(s);
    s.out().line(fmt::format("  {:<4} {:<8} {:<4} {:<42} {:<14} {:<5} {:<5} {}", "Id", "LWP", "OMP",
                             "State", "Wait id", "Level", "Team", "Task"));
    nlohmann::json rows = nlohmann::json::array();
    for (const omp_thread_row& r : threads) {
        pid_t tid = r.tid;
        std::string mark = tid == s.selected_tid() ? "*" : " ";
        std::string id = thread_label(s, tid);
        if (!r.openmp) {
            s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {}", mark, id, tid, "-", "(not an OpenMP thread)"));
            rows.push_back({{"id", id}, {"lwp", tid}, {"openmp", false}});
            continue;
        }
        // A wait id is what the thread waits for (a lock's address): hex, as addresses are.
        std::string wait_text = r.wait_id == 0 ? "0" : fmt::format("{:#x}", r.wait_id);
        s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {:<42} {:<14} {:<5} {:<5} {}", mark, id, tid,
                                 opt_num(r.thread_num), r.state, wait_text, opt_num(r.level), opt_num(r.team_size),
                                 r.task));
        rows.push_back({{"id", id},
                        {"lwp", tid},
                        {"openmp", true},
                        {"thread_num", opt_json(r.thread_num)},
                        {"state", r.state},
                        {"wait_id", r.wait_id},
                        {"level", opt_json(r.level)},
                        {"team_size", opt_json(r.team_size)},
                        {"task", r.task}});
    }
    s.out().field("threads", rows);
}

// ---- omp parallel ------------------------------------------------------------------

void print_region(session& s, const omp_region& r, int depth, nlohmann::json& out) {
    std::string indent(depth * 2, ' ');
    s.out().line(fmt::format("{}Parallel region at level {}: team size {}, {}", indent, opt_num(r.level),
                             opt_num(r.team_size), r.function));
    nlohmann::json threads = nlohmann::json::array();
    for (const auto& m : r.threads) {
        s.out().line(fmt::format("{}  thread {}: LWP {} (thread {}) {} wait id {:#x}", indent, m.thread_num,
                                 m.lwp ? std::to_string(*m.lwp) : "?", thread_label(s, m.lwp), m.state, m.wait_id));
        threads.push_back({{"thread_num", m.thread_num},
                           {"lwp", m.lwp ? nlohmann::json(*m.lwp) : nlohmann::json()},
                           {"state", m.state}});
    }
    nlohmann::json children = nlohmann::json::array();
    for (const omp_region& c : r.regions) {
        print_region(s, c, depth + 1, children);
    }
    out.push_back({{"level", opt_json(r.level)},
                   {"team_size", opt_json(r.team_size)},
                   {"function", r.function},
                   {"threads", threads},
                   {"regions", children}});
}

void cmd_omp_parallel(session& s, std::string_view) {
    std::vector<omp_region> regions = omp_regions(s);
    nlohmann::json out = nlohmann::json::array();
    for (const omp_region& r : regions) {
        print_region(s, r, 0, out);
    }
    if (regions.empty()) {
        s.out().line("No active parallel region.");
    }
    s.out().field("regions", out);
}

// ---- omp tasks ---------------------------------------------------------------------

void cmd_omp_tasks(session& s, std::string_view) {
    std::vector<omp_task_row> tasks = omp_task_rows(s);
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const omp_task_row& t = tasks[i];
        std::string flags = t.implicit ? "implicit" : "explicit";
        if (t.final) {
            flags += ",final";
        }
        std::string on = t.running_on ? fmt::format("thread {} (LWP {})", thread_label(s, t.running_on), *t.running_on)
                                      : "suspended";
        s.out().line(fmt::format("Task {}: {}, {}, {}, generated by task {}, scheduled by task {}", i + 1, flags,
                                 t.function, on, t.parent, t.scheduling_parent));
        rows.push_back({{"task", i + 1},
                        {"implicit", t.implicit},
                        {"final", t.final},
                        {"function", t.function},
                        {"lwp", t.running_on ? nlohmann::json(*t.running_on) : nlohmann::json()},
                        {"parent", t.parent},
                        {"scheduling_parent", t.scheduling_parent}});
    }
    s.out().field("tasks", rows);
}

// ---- omp icvs ----------------------------------------------------------------------

void cmd_omp_icvs(session& s, std::string_view args) {
    std::string_view want = trim(args);
    std::optional<icv_scope> only;
    if (!want.empty()) {
        if (want == "address-space" || want == "address_space") {
            only = icv_scope::address_space;
        } else if (want == "thread") {
            only = icv_scope::thread;
        } else if (want == "parallel") {
            only = icv_scope::parallel;
        } else if (want == "task") {
            only = icv_scope::task;
        } else {
            check_inspectable(s);  // as before: no OpenMP says so before a bad scope does
            error::send("Unknown ICV scope \"" + std::string(want) +
                        "\": use address-space, thread, parallel or task.");
        }
    }
    std::vector<omp_icv_row> icvs = omp_icv_rows(s, only);
    s.out().line(fmt::format("{:<31} {:<14} {}", "ICV Name", "Scope", "Value"));
    nlohmann::json rows = nlohmann::json::array();
    for (const omp_icv_row& icv : icvs) {
        s.out().line(fmt::format("{:<31} {:<14} {}", icv.name, icv.scope, icv.value));
        rows.push_back({{"name", icv.name},
                        {"scope", icv.scope},
                        {"value", icv.number ? nlohmann::json(*icv.number) : nlohmann::json(icv.value)}});
    }
    s.out().field("icvs", rows);
}

}  // namespace

void omp_set_ompd_library(session& s, const std::string& path) {
    if (path.empty()) {
        error::send("Argument required (path of libompd.so).");
    }
    set_ompd_library(s, path);
}

std::vector<std::string> omp_launch_environment(const std::vector<std::string>& env) {
    for (const auto& e : env) {
        if (e.rfind("OMP_DEBUG=", 0) == 0) {
            return {};
        }
    }
    if (std::getenv("OMP_DEBUG") != nullptr) {
        return {};
    }
    return {"OMP_DEBUG=enabled"};
}

void register_omp_commands(command_table& t) {
    command_table& catch_table = prefix_table(t, "catch", "Set catchpoints to catch events.");
    catch_table.add(command{"omp", {}, "Catch OpenMP events (through the runtime's OMPD breakpoints).",
                            "catch omp parallel-begin|parallel-end|task-begin|task-end|thread-begin|thread-end\n"
                            "Stops when the event happens and shows the region or task with its team size\n"
                            "and source location. Needs an OMPD-enabled runtime and OMP_DEBUG=enabled.",
                            cmd_catch_omp, false, nullptr});

    command_table& omp = prefix_table(t, "omp", "OpenMP threads, parallel regions, tasks and ICVs (through OMPD).");
    omp.add(command{"info", {}, "Show the OpenMP runtime and the OMPD library in use.",
                    "omp info\nThe runtime, the OMPD library loaded for it, its API version and version string.",
                    cmd_omp_info, false, nullptr});
    omp.add(command{"devices", {}, "Show the OpenMP devices (the host; offload devices the runtime announces).",
                    "omp devices\nThe host device, and whether the runtime can announce offload devices.",
                    cmd_omp_devices, false, nullptr});
    omp.add(command{"threads", {}, "List the OpenMP threads.",
                    "omp threads\nEvery thread with its OpenMP thread number, LWP, ompdbg thread id, state,\n"
                    "wait id, and its current parallel region (level, team size) and task.",
                    cmd_omp_threads, false, nullptr});
    omp.add(command{"parallel", {}, "Show the tree of active parallel regions.",
                    "omp parallel\nEvery active parallel region: nesting level, team size, outlined function\n"
                    "and source location, and the threads of its team.",
                    cmd_omp_parallel, false, nullptr});
    omp.add(command{"tasks", {}, "List implicit and explicit tasks.",
                    "omp tasks\nTasks running on OpenMP threads and the tasks that generated them.",
                    cmd_omp_tasks, false, nullptr});
    omp.add(command{"icvs", {}, "Show the internal control variables of the selected thread.",
                    "omp icvs [address-space|thread|parallel|task]\nEvery ICV OMPD knows, at one scope or all.",
                    cmd_omp_icvs, false, nullptr});

    omp.add(command{"bt", {"backtrace"}, "Backtrace with OpenMP runtime frames folded away.",
                    "omp bt [continued]\nThe selected thread's stack without the OpenMP runtime's frames, each\n"
                    "outlined region shown as its construct at file:line; each frame keeps the number\n"
                    "`frame N` selects. With `continued`, a worker's stack goes on, after a line naming\n"
                    "it, in the thread that encountered the construct, numbered as in that thread.",
                    cmd_omp_bt, false, nullptr});

    command_table& set = prefix_table(t, "set", "Evaluate expression EXP and assign result to variable VAR.");
    set.add(command{"plugin-path", {}, "Allow debugger plugins from a directory.",
                    "set plugin-path DIR\nLoad debugger plugins (libompd, DMPL libraries, the MPI message-queue DLL)\n"
                    "from DIR even if it is not a trusted place.",
                    [](session& s, std::string_view a) { s.allow_plugin_directory(std::string(trim(a))); },
                    false, nullptr});
    set.add(command{"ompd-library", {}, "Use this libompd when the runtime names none that loads.",
                    "set ompd-library PATH",
                    [](session& s, std::string_view a) { omp_set_ompd_library(s, std::string(trim(a))); },
                    false, nullptr});
}

}  // namespace ompdbg::app
