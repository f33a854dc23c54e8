// omp info / threads / parallel / tasks / icvs and the OMPD settings: the OpenMP view of the
// selected process through LLVM's libompd (plugins-host's ompd host does the talking).
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
#include "ompdbg/debugger/omp/ompd_tls.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::app {

namespace fs = std::filesystem;
using plugins::omp_parallel;
using plugins::omp_scope;
using plugins::omp_task;
using plugins::omp_thread;
using plugins::ompd_address_space;

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
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    auto probe = plugins::probe_openmp_runtime(*tgt);
    if (!probe.runtime_path.empty()) {
        s.out().line("OpenMP runtime:      " + probe.runtime_path.string());
    }
    ompd_address_space& as = require_ompd(s);
    auto& lib = as.library();
    s.out().line("OMPD library:        " + lib.path().string());
    s.out().line("Found:               " + library_state(s).library_source);
    s.out().line("OMPD API version:    " + std::to_string(lib.api_version()));
    s.out().line("OMPD version string: " + lib.version_string());
    if (auto v = as.omp_version()) {
        s.out().line("OpenMP version:      " + std::to_string(*v));
    }
    s.out().field("runtime", probe.runtime_path.string());
    s.out().field("library", lib.path().string());
    s.out().field("found", library_state(s).library_source);
    s.out().field("api_version", lib.api_version());
    s.out().field("version_string", lib.version_string());
}

// ---- omp devices ----------------------------------------------------------------

/// OpenMP 5.1 §20.6: a runtime announces each offload device at ompd_bp_device_begin, and
/// only then does a tool call ompd_device_initialize for it. ompdbg debugs the host device;
/// a runtime without that location (a host-only build, as the bootstrap's) has no other.
void cmd_omp_devices(session& s, std::string_view) {
    ompd_address_space& as = require_ompd(s);
    auto probe = plugins::probe_openmp_runtime(as.target());
    bool announces = probe.event_addresses.count("ompd_bp_device_begin") != 0;
    s.out().line("Device 0: host (initial device), the address space of process " +
                 std::to_string(as.target().pid()));
    if (announces) {
        s.out().line("Offload devices: the runtime announces them at ompd_bp_device_begin; ompdbg debugs the "
                     "host device only.");
    } else {
        s.out().line("No offload devices: " + probe.runtime_path.string() +
                     " defines no ompd_bp_device_begin (a host-only runtime).");
    }
    s.out().field("devices", nlohmann::json::array({{{"number", 0}, {"kind", "host"}}}));
    s.out().field("offload_devices_announced", announces);
}

// ---- omp threads -------------------------------------------------------------------

void cmd_omp_threads(session& s, std::string_view) {
    ompd_address_space& as = require_ompd(s);
    tracer::target& tgt = as.target();
    auto thread_num_icv = as.find_icv("thread-num-var");
    auto levels_icv = as.find_icv("levels-var");
    auto team_icv = as.find_icv("team-size-var");
    s.out().line(fmt::format("  {:<4} {:<8} {:<4} {:<42} {:<14} {:<5} {:<5} {}", "Id", "LWP", "OMP",
                             "State", "Wait id", "Level", "Team", "Task"));
    nlohmann::json rows = nlohmann::json::array();
    for (tracer::thread* th : tgt.threads()) {
        pid_t tid = th->tid();
        std::string mark = tid == s.selected_tid() ? "*" : " ";
        std::string id = thread_label(s, tid);
        auto t = as.thread_of(tid);
        if (!t) {
            s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {}", mark, id, tid, "-", "(not an OpenMP thread)"));
            rows.push_back({{"id", id}, {"lwp", tid}, {"openmp", false}});
            continue;
        }
        auto [state, wait] = as.state(*t);
        std::optional<std::int64_t> num, level, team;
        if (thread_num_icv) {
            num = as.icv(*t, *thread_num_icv).number;
        }
        auto par = as.current_parallel(*t);
        if (par && levels_icv) {
            level = as.icv(*par, *levels_icv).number;
        }
        if (par && team_icv) {
            team = as.icv(*par, *team_icv).number;
        }
        std::string task;
        if (auto tk = as.current_task(*t)) {
            if (auto fn = as.task_function(*tk)) {
                task = describe_code(s, *fn);
            }
        }
        std::string state_name = as.state_name(state);
        // A wait id is what the thread waits for (a lock's address): hex, as addresses are.
        std::string wait_text = wait == 0 ? "0" : fmt::format("{:#x}", wait);
        s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {:<42} {:<14} {:<5} {:<5} {}", mark, id, tid,
                                 opt_num(num), state_name, wait_text, opt_num(level), opt_num(team), task));
        rows.push_back({{"id", id},
                        {"lwp", tid},
                        {"openmp", true},
                        {"thread_num", num ? nlohmann::json(*num) : nlohmann::json()},
                        {"state", state_name},
                        {"wait_id", wait},
                        {"level", level ? nlohmann::json(*level) : nlohmann::json()},
                        {"team_size", team ? nlohmann::json(*team) : nlohmann::json()},
                        {"task", task}});
    }
    s.out().field("threads", rows);
}

// ---- omp parallel ------------------------------------------------------------------

struct region_node {
    omp_parallel handle;
    std::optional<std::int64_t> level, team_size;
    std::vector<std::size_t> children;
    std::optional<std::size_t> parent;
};

void print_region(session& s, ompd_address_space& as, std::vector<region_node>& nodes, std::size_t i,
                  int depth, nlohmann::json& out) {
    region_node& n = nodes[i];
    std::string indent(depth * 2, ' ');
    std::string fn;
    if (auto task0 = as.task_in_parallel(n.handle, 0)) {
        if (auto f = as.task_function(*task0)) {
            fn = describe_code(s, *f);
        }
    }
    s.out().line(fmt::format("{}Parallel region at level {}: team size {}, {}", indent, opt_num(n.level),
                             opt_num(n.team_size), fn));
    nlohmann::json threads = nlohmann::json::array();
    for (int k = 0; n.team_size && k < *n.team_size; ++k) {
        auto t = as.thread_in_parallel(n.handle, k);
        if (!t) {
            continue;
        }
        auto lwp = as.os_thread_of(*t);
        auto [state, wait] = as.state(*t);
        std::string sname = as.state_name(state);
        s.out().line(fmt::format("{}  thread {}: LWP {} (thread {}) {} wait id {:#x}", indent, k,
                                 lwp ? std::to_string(*lwp) : "?", thread_label(s, lwp), sname, wait));
        threads.push_back({{"thread_num", k},
                           {"lwp", lwp ? nlohmann::json(*lwp) : nlohmann::json()},
                           {"state", sname}});
    }
    nlohmann::json children = nlohmann::json::array();
    for (std::size_t c : n.children) {
        print_region(s, as, nodes, c, depth + 1, children);
    }
    out.push_back({{"level", n.level ? nlohmann::json(*n.level) : nlohmann::json()},
                   {"team_size", n.team_size ? nlohmann::json(*n.team_size) : nlohmann::json()},
                   {"function", fn},
                   {"threads", threads},
                   {"regions", children}});
}

void cmd_omp_parallel(session& s, std::string_view) {
    ompd_address_space& as = require_ompd(s);
    auto levels_icv = as.find_icv("levels-var");
    auto team_icv = as.find_icv("team-size-var");
    std::vector<region_node> nodes;
    // Every OpenMP thread's current region and its enclosing chain, merged into one tree.
    auto index_of = [&](const omp_parallel& p) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (as.same(nodes[i].handle, p)) {
                return i;
            }
        }
        return std::nullopt;
    };
    for (tracer::thread* th : as.target().threads()) {
        auto t = as.thread_of(th->tid());
        if (!t) {
            continue;
        }
        auto p = as.current_parallel(*t);
        std::optional<std::size_t> child;
        while (p) {
            std::optional<std::int64_t> level = levels_icv ? as.icv(*p, *levels_icv).number : std::nullopt;
            if (!level || *level == 0) {
                break;  // the implicit region of the initial thread
            }
            auto existing = index_of(*p);
            std::size_t idx;
            if (existing) {
                idx = *existing;
            } else {
                idx = nodes.size();
                nodes.push_back(region_node{*p, level, team_icv ? as.icv(*p, *team_icv).number : std::nullopt, {}, {}});
            }
            if (child && !nodes[*child].parent) {
                nodes[*child].parent = idx;
                nodes[idx].children.push_back(*child);
            }
            if (existing) {
                break;
            }
            child = idx;
            p = as.enclosing_parallel(*p);
        }
    }
    nlohmann::json out = nlohmann::json::array();
    bool any = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].parent) {
            print_region(s, as, nodes, i, 0, out);
            any = true;
        }
    }
    if (!any) {
        s.out().line("No active parallel region.");
    }
    s.out().field("regions", out);
}

// ---- omp tasks ---------------------------------------------------------------------

void cmd_omp_tasks(session& s, std::string_view) {
    ompd_address_space& as = require_ompd(s);
    auto implicit_icv = as.find_icv("implicit-task-var");
    auto final_icv = as.find_icv("final-task-var");
    struct task_node {
        omp_task handle;
        std::optional<pid_t> running_on;
    };
    std::vector<task_node> tasks;
    auto index_of = [&](const omp_task& t) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            if (as.same(tasks[i].handle, t)) {
                return i;
            }
        }
        return std::nullopt;
    };
    for (tracer::thread* th : as.target().threads()) {
        auto t = as.thread_of(th->tid());
        if (!t) {
            continue;
        }
        auto tk = as.current_task(*t);
        bool first = true;
        for (int guard = 0; tk && guard < 64; ++guard) {
            auto existing = index_of(*tk);
            if (existing) {
                if (first && !tasks[*existing].running_on) {
                    tasks[*existing].running_on = th->tid();
                }
                break;
            }
            tasks.push_back(task_node{*tk, first ? std::optional<pid_t>(th->tid()) : std::nullopt});
            first = false;
            tk = as.generating_task(*tk);
        }
    }
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        auto& tk = tasks[i].handle;
        bool implicit = implicit_icv && as.icv(tk, *implicit_icv).number.value_or(0) != 0;
        bool final = final_icv && as.icv(tk, *final_icv).number.value_or(0) != 0;
        std::string fn = "no task function (the initial task)";
        if (auto f = as.task_function(tk); f && *f != 0) {
            fn = describe_code(s, *f);
        }
        std::string parent = "-";
        if (auto g = as.generating_task(tk)) {
            if (auto j = index_of(*g)) {
                parent = std::to_string(*j + 1);
            }
        }
        std::string sched = "-";
        if (auto g = as.scheduling_task(tk)) {
            if (auto j = index_of(*g)) {
                sched = std::to_string(*j + 1);
            }
        }
        std::string flags = implicit ? "implicit" : "explicit";
        if (final) {
            flags += ",final";
        }
        std::string on = tasks[i].running_on
                             ? fmt::format("thread {} (LWP {})", thread_label(s, tasks[i].running_on),
                                           *tasks[i].running_on)
                             : "suspended";
        s.out().line(fmt::format("Task {}: {}, {}, {}, generated by task {}, scheduled by task {}", i + 1,
                                 flags, fn, on, parent, sched));
        rows.push_back({{"task", i + 1},
                        {"implicit", implicit},
                        {"final", final},
                        {"function", fn},
                        {"lwp", tasks[i].running_on ? nlohmann::json(*tasks[i].running_on) : nlohmann::json()},
                        {"parent", parent},
                        {"scheduling_parent", sched}});
    }
    s.out().field("tasks", rows);
}

// ---- omp icvs ----------------------------------------------------------------------

void cmd_omp_icvs(session& s, std::string_view args) {
    ompd_address_space& as = require_ompd(s);
    std::string_view want = trim(args);
    std::optional<omp_scope> only;
    if (!want.empty()) {
        if (want == "address-space" || want == "address_space") {
            only = omp_scope::address_space;
        } else if (want == "thread") {
            only = omp_scope::thread;
        } else if (want == "parallel") {
            only = omp_scope::parallel;
        } else if (want == "task") {
            only = omp_scope::task;
        } else {
            error::send("Unknown ICV scope \"" + std::string(want) +
                        "\": use address-space, thread, parallel or task.");
        }
    }
    pid_t tid = s.selected_tid();
    auto t = as.thread_of(tid);
    if (!t && only != omp_scope::address_space) {
        error::send("Thread " + thread_label(s, tid) + " (LWP " + std::to_string(tid) +
                    ") is not an OpenMP thread.");
    }
    std::optional<omp_parallel> par = t ? as.current_parallel(*t) : std::nullopt;
    std::optional<omp_task> task = t ? as.current_task(*t) : std::nullopt;
    s.out().line(fmt::format("{:<31} {:<14} {}", "ICV Name", "Scope", "Value"));
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& icv : as.icvs()) {
        omp_scope scope = icv.scope == omp_scope::implicit_task ? omp_scope::task : icv.scope;
        if (only && scope != *only) {
            continue;
        }
        plugins::omp_icv_value v;
        switch (scope) {
            case omp_scope::address_space: v = as.icv(icv); break;
            case omp_scope::thread: v = as.icv(*t, icv); break;
            case omp_scope::parallel:
                if (!par) continue;
                v = as.icv(*par, icv);
                break;
            default:
                if (!task) continue;
                v = as.icv(*task, icv);
                break;
        }
        s.out().line(fmt::format("{:<31} {:<14} {}", icv.name, plugins::omp_scope_name(icv.scope), v.to_string()));
        rows.push_back({{"name", icv.name},
                        {"scope", plugins::omp_scope_name(icv.scope)},
                        {"value", v.number ? nlohmann::json(*v.number) : nlohmann::json(v.to_string())}});
    }
    s.out().field("icvs", rows);
}

}  // namespace

void omp_set_ompd_library(session& s, const std::string& path) {
    if (path.empty()) {
        error::send("Argument required (path of libompd.so).");
    }
    omp_library_state& st = library_state(s);
    st.ompd_library_setting = fs::path(path);
    st.library.reset();
    forget_address_spaces(s);
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
