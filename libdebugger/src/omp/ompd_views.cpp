// The OpenMP commands' views through OMPD (ompd_views.hpp; from the CLI, issue 19): each
// walks the runtime of the session's target through the process's OMPD address space and
// returns what the front end prints.

#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "omp/ompd_state.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace ompdbg::debugger {

using plugins::omp_parallel;
using plugins::omp_scope;
using plugins::omp_task;
using plugins::ompd_address_space;

std::string openmp_runtime_path(session& s) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    return plugins::probe_openmp_runtime(*tgt).runtime_path.string();
}

void check_inspectable(session& s) {
    ompd::require_ompd(s);
}

void set_ompd_library(session& s, const std::string& path) {
    ompd::omp_library_state& st = ompd::library_state(s);
    st.ompd_library_setting = std::filesystem::path(path);
    st.library.reset();
    ompd::forget_address_spaces(s);
}

ompd_library_info ompd_library_of(session& s) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto& lib = as.library();
    return ompd_library_info{lib.path().string(), ompd::library_state(s).library_source, lib.api_version(),
                             lib.version_string(), as.omp_version()};
}

// OpenMP 5.1 §20.6: a runtime announces each offload device at ompd_bp_device_begin, and
// only then does a tool call ompd_device_initialize for it. ompdbg debugs the host device;
// a runtime without that location (a host-only build, as the bootstrap's) has no other.
omp_devices_info omp_devices(session& s) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto probe = plugins::probe_openmp_runtime(as.target());
    return omp_devices_info{as.target().pid(), probe.event_addresses.count("ompd_bp_device_begin") != 0,
                            probe.runtime_path.string()};
}

std::vector<omp_thread_row> omp_thread_rows(session& s) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto thread_num_icv = as.find_icv("thread-num-var");
    auto levels_icv = as.find_icv("levels-var");
    auto team_icv = as.find_icv("team-size-var");
    std::vector<omp_thread_row> rows;
    for (tracer::thread* th : as.target().threads()) {
        omp_thread_row row;
        row.tid = th->tid();
        auto t = as.thread_of(row.tid);
        if (!t) {
            rows.push_back(row);
            continue;
        }
        row.openmp = true;
        auto [state, wait] = as.state(*t);
        row.wait_id = wait;
        if (thread_num_icv) {
            row.thread_num = as.icv(*t, *thread_num_icv).number;
        }
        auto par = as.current_parallel(*t);
        if (par && levels_icv) {
            row.level = as.icv(*par, *levels_icv).number;
        }
        if (par && team_icv) {
            row.team_size = as.icv(*par, *team_icv).number;
        }
        if (auto tk = as.current_task(*t)) {
            if (auto fn = as.task_function(*tk)) {
                row.task = ompd::describe_code(s, *fn);
            }
        }
        row.state = as.state_name(state);
        rows.push_back(row);
    }
    return rows;
}

namespace {

/// The index of the node whose handle the runtime calls the same as `h` (OMPD handles of
/// one region or task differ by thread: only ompd_*_handle_compare tells).
template <typename Node, typename Handle>
std::optional<std::size_t> index_of_same(ompd_address_space& as, const std::vector<Node>& nodes, const Handle& h) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (as.same(nodes[i].handle, h)) {
            return i;
        }
    }
    return std::nullopt;
}

struct region_node {
    omp_parallel handle;
    std::optional<std::int64_t> level, team_size;
    std::vector<std::size_t> children;
    std::optional<std::size_t> parent;
};

omp_region describe_region(session& s, ompd_address_space& as, const std::vector<region_node>& nodes,
                           std::size_t i) {
    const region_node& n = nodes[i];
    omp_region r;
    r.level = n.level;
    r.team_size = n.team_size;
    if (auto task0 = as.task_in_parallel(n.handle, 0)) {
        if (auto f = as.task_function(*task0)) {
            r.function = ompd::describe_code(s, *f);
        }
    }
    for (int k = 0; n.team_size && k < *n.team_size; ++k) {
        auto t = as.thread_in_parallel(n.handle, k);
        if (!t) {
            continue;
        }
        auto lwp = as.os_thread_of(*t);
        auto [state, wait] = as.state(*t);
        r.threads.push_back(omp_region::member{k, lwp, as.state_name(state), wait});
    }
    for (std::size_t c : n.children) {
        r.regions.push_back(describe_region(s, as, nodes, c));
    }
    return r;
}

}  // namespace

std::vector<omp_region> omp_regions(session& s) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto levels_icv = as.find_icv("levels-var");
    auto team_icv = as.find_icv("team-size-var");
    std::vector<region_node> nodes;
    // Every OpenMP thread's current region and its enclosing chain, merged into one tree.
    auto index_of = [&](const omp_parallel& p) { return index_of_same(as, nodes, p); };
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
    std::vector<omp_region> out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].parent) {
            out.push_back(describe_region(s, as, nodes, i));
        }
    }
    return out;
}

std::vector<omp_task_row> omp_task_rows(session& s) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto implicit_icv = as.find_icv("implicit-task-var");
    auto final_icv = as.find_icv("final-task-var");
    struct task_node {
        omp_task handle;
        std::optional<pid_t> running_on;
    };
    std::vector<task_node> tasks;
    auto index_of = [&](const omp_task& t) { return index_of_same(as, tasks, t); };
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
    std::vector<omp_task_row> rows;
    for (const auto& node : tasks) {
        const omp_task& tk = node.handle;
        omp_task_row row;
        row.implicit = implicit_icv && as.icv(tk, *implicit_icv).number.value_or(0) != 0;
        row.final = final_icv && as.icv(tk, *final_icv).number.value_or(0) != 0;
        row.function = "no task function (the initial task)";
        if (auto f = as.task_function(tk); f && *f != 0) {
            row.function = ompd::describe_code(s, *f);
        }
        if (auto g = as.generating_task(tk)) {
            if (auto j = index_of(*g)) {
                row.parent = std::to_string(*j + 1);
            }
        }
        if (auto g = as.scheduling_task(tk)) {
            if (auto j = index_of(*g)) {
                row.scheduling_parent = std::to_string(*j + 1);
            }
        }
        row.running_on = node.running_on;
        rows.push_back(row);
    }
    return rows;
}

std::vector<omp_icv_row> omp_icv_rows(session& s, std::optional<icv_scope> only_scope) {
    ompd_address_space& as = ompd::require_ompd(s);
    std::optional<omp_scope> only;
    if (only_scope) {
        switch (*only_scope) {
            case icv_scope::address_space: only = omp_scope::address_space; break;
            case icv_scope::thread: only = omp_scope::thread; break;
            case icv_scope::parallel: only = omp_scope::parallel; break;
            case icv_scope::task: only = omp_scope::task; break;
        }
    }
    pid_t tid = s.selected_tid();
    auto t = as.thread_of(tid);
    if (!t && only != omp_scope::address_space) {
        int n = s.thread_number(tid);
        error::send("Thread " + (n > 0 ? std::to_string(n) : std::string("?")) + " (LWP " + std::to_string(tid) +
                    ") is not an OpenMP thread.");
    }
    std::optional<omp_parallel> par = t ? as.current_parallel(*t) : std::nullopt;
    std::optional<omp_task> task = t ? as.current_task(*t) : std::nullopt;
    std::vector<omp_icv_row> rows;
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
        rows.push_back(omp_icv_row{icv.name, std::string(plugins::omp_scope_name(icv.scope)), v.to_string(), v.number});
    }
    return rows;
}

}  // namespace ompdbg::debugger
