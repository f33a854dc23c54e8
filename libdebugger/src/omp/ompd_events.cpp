// `catch omp` events read through OMPD at the runtime's ompd_bp_* locations, and the runtime
// watch on ompd_dll_locations_valid (ompd_events.hpp; from the CLI, issue 19).

#include "ompdbg/debugger/omp/ompd_events.hpp"
#include "omp/ompd_state.hpp"
#include "session/plugin_trust_host.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace ompdbg::debugger {

using plugins::ompd_address_space;

namespace {

std::string opt_num(std::optional<std::int64_t> v) {
    return v ? std::to_string(*v) : "-";
}

void set_field(omp_event& ev, const char* name, std::optional<std::int64_t> v) {
    if (v) {
        ev.fields[name] = *v;
    }
}

/// The region a thread is forking, as its runtime's debug information shows it.
struct forked_region {
    std::optional<std::int64_t> level, team_size;
    std::optional<std::uint64_t> function;
};

/// True when thread `tid` is at ompd_bp_parallel_begin called from __kmp_fork_call.
/// LLVM's libomp (19) calls it there before it makes the new team the encountering
/// thread's current one (kmp_runtime.cpp, before __kmp_fork_team_threads), so OMPD still
/// shows the enclosing region. (From a serialized region's __ompt_lw_taskteam_link or from
/// GOMP_parallel_start the new region is current already.)
bool is_forking(session& s, pid_t tid) {
    try {
        const auto& frames = s.stack(tid);
        return frames.size() > 1 && frame_function_name(frames[1]) == "__kmp_fork_call";
    } catch (const std::exception&) {
        return false;
    }
}

/// The team __kmp_fork_call is forking, from its local `team` and the runtime's debug
/// information; nullopt without it.
std::optional<forked_region> region_being_forked(session& s, pid_t tid) {
    try {
        const auto& frames = s.stack(tid);
        frame_context ctx(s, tid, frames.at(1));
        auto number = [&](const char* expr) -> std::optional<std::int64_t> {
            try {
                return dwarf::as_integer(dwarf::evaluate(expr, ctx));
            } catch (const std::exception& e) {
                log::write(log::channel::plugin, "OMPD: {} in __kmp_fork_call: {}", expr, e.what());
                return std::nullopt;
            }
        };
        forked_region r;
        r.team_size = number("team->t.t_nproc");
        r.level = number("team->t.t_level");
        if (auto f = number("(unsigned long)team->t.t_pkfn")) {
            r.function = static_cast<std::uint64_t>(*f);
        }
        if (r.team_size && r.level) {
            return r;
        }
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "OMPD: parallel-begin frames: {}", e.what());
    }
    return std::nullopt;
}

/// The team __kmp_fork_call is forking, without the runtime's DWARF. At
/// ompd_bp_parallel_begin the new team is allocated and set up but not yet linked to the
/// encountering thread (see is_forking); __kmp_fork_call keeps it live across the call, so
/// its address is in one of the caller's callee-saved registers or a slot of its frame.
/// The runtime's OMPD layout symbols (ompd_access__*, the offsets libompd reads the runtime
/// with) say how to read a kmp_team_t and a kmp_info_t. Among the frame's values, the new
/// team is the one the runtime set up for this thread: its t_parent is the team of the task
/// the thread runs (th_current_task->td_team, the enclosing region's team), its
/// t_master_tid the thread's number in that team (ds_tid), and its
/// t_pkfn is set (__kmp_free_team clears t_pkfn of every team that ended, and t_parent of
/// the non-hot ones). A team forked by a sibling thread has another t_master_tid; one that
/// ended has no t_pkfn. So at most one team fits; nullopt when none does (or, against the
/// runtime's invariants, two do). One exception: when the initial thread forks its root's
/// hot team at level 0, libomp 19 has made that team the thread's (and its task's) team
/// already: then no team has it as parent, and the thread's own team, forked (t_pkfn set)
/// by this thread and held in the frame, is the new one.
std::optional<forked_region> region_from_team_layout(session& s, pid_t tid, ompd_address_space& as) {
    tracer::target& tgt = as.target();
    auto probe = plugins::probe_openmp_runtime(tgt);
    const tracer::loaded_module* rt = nullptr;
    for (const auto& m : tgt.modules()) {
        if (m.path == probe.runtime_path && m.load_bias == probe.load_bias && m.elf) {
            rt = &m;
        }
    }
    tracer::thread* th = tgt.find_thread(tid);
    if (rt == nullptr || th == nullptr) {
        return std::nullopt;
    }
    auto read_u64 = [&](std::uint64_t addr) -> std::optional<std::uint64_t> {
        std::uint64_t v = 0;
        if (addr == 0 || tgt.try_read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1))) != sizeof v) {
            return std::nullopt;
        }
        return v;
    };
    auto read_i32 = [&](std::uint64_t addr) -> std::optional<std::int64_t> {
        std::int32_t v = 0;
        if (addr == 0 || tgt.try_read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1))) != sizeof v) {
            return std::nullopt;
        }
        return v;
    };
    auto symbol_addr = [&](const std::string& name) -> std::optional<std::uint64_t> {
        auto syms = rt->elf->find_symbols(name);
        if (syms.empty()) {
            return std::nullopt;
        }
        return rt->to_runtime(syms.front().value).addr();
    };
    auto layout = [&](const std::string& name) -> std::optional<std::uint64_t> {
        auto at = symbol_addr("ompd_access__" + name);
        return at ? read_u64(*at) : std::nullopt;
    };
    auto team_t = layout("kmp_team_p__t"), nproc_at = layout("kmp_base_team_t__t_nproc"),
         level_at = layout("kmp_base_team_t__t_level"), pkfn_at = layout("kmp_base_team_t__t_pkfn"),
         parent_at = layout("kmp_base_team_t__t_parent"), master_tid_at = layout("kmp_base_team_t__t_master_tid"),
         info_th = layout("kmp_info_t__th"),
         th_info = layout("kmp_base_info_t__th_info"), desc_ds = layout("kmp_desc_t__ds"),
         th_current_task = layout("kmp_base_info_t__th_current_task"), td_team = layout("kmp_taskdata_t__td_team"),
         ds_thread = layout("kmp_desc_base_t__ds_thread"), ds_tid = layout("kmp_desc_base_t__ds_tid");
    auto threads_sym = symbol_addr("__kmp_threads"), capacity_sym = symbol_addr("__kmp_threads_capacity");
    if (!team_t || !nproc_at || !level_at || !pkfn_at || !parent_at || !master_tid_at || !info_th ||
        !th_info || !desc_ds || !ds_thread || !ds_tid || !th_current_task || !td_team || !threads_sym ||
        !capacity_sym) {
        log::write(log::channel::plugin, "OMPD: the runtime lacks a layout symbol for reading a forked team");
        return std::nullopt;
    }
    // The encountering thread's kmp_info_t: the entry of __kmp_threads whose ds_thread is
    // its pthread_t (the thread pointer, fs_base on x86-64), as libompd finds threads.
    auto threads = read_u64(*threads_sym);
    auto capacity = read_i32(*capacity_sym);
    std::uint64_t self = th->regs().gp().fs_base;
    std::optional<std::uint64_t> current_team;
    std::optional<std::int64_t> my_tid;
    for (std::int64_t i = 0; threads && capacity && i < std::min<std::int64_t>(*capacity, 1 << 16); ++i) {
        auto info = read_u64(*threads + 8 * static_cast<std::uint64_t>(i));
        if (!info || *info == 0) {
            continue;
        }
        std::uint64_t desc = *info + *info_th + *th_info + *desc_ds;
        if (read_u64(desc + *ds_thread) == self) {
            if (auto task = read_u64(*info + *info_th + *th_current_task); task && *task != 0) {
                current_team = read_u64(*task + *td_team);
            }
            my_tid = read_i32(desc + *ds_tid);
            break;
        }
    }
    if (!current_team || *current_team == 0 || !my_tid) {
        log::write(log::channel::plugin, "OMPD: thread {} not found in __kmp_threads", tid);
        return std::nullopt;
    }
    const auto& frames = s.stack(tid);
    if (frames.size() < 2) {
        return std::nullopt;
    }
    const tracer::frame& caller = frames[1].physical;
    std::vector<std::uint64_t> candidates;
    // Callee-saved registers (rbx, rbp, r12-r15) as the caller left them: the thread's own
    // registers at the event function (which saves none of them), and what the unwinder
    // recovered for the caller's frame.
    for (int reg : {3, 6, 12, 13, 14, 15}) {
        if (auto v = th->regs().read_dwarf(reg)) {
            candidates.push_back(*v);
        }
        if (static_cast<std::size_t>(reg) < caller.dwarf_regs.size() && caller.dwarf_regs[reg]) {
            candidates.push_back(*caller.dwarf_regs[reg]);
        }
    }
    for (std::uint64_t a = frames[0].physical.sp.addr(); a < caller.cfa.addr() && candidates.size() < 4096; a += 8) {
        if (auto v = read_u64(a)) {
            candidates.push_back(*v);
        }
    }
    std::map<std::uint64_t, forked_region> teams;
    std::optional<forked_region> own_team;   // the exception above
    for (std::uint64_t c : candidates) {
        if (c == 0 || c % 8 != 0 || teams.count(c)) {
            continue;
        }
        std::uint64_t base = c + *team_t;
        bool child = read_u64(base + *parent_at) == current_team;
        if ((!child && c != *current_team) || read_i32(base + *master_tid_at) != my_tid) {
            continue;
        }
        auto pkfn = read_u64(base + *pkfn_at);
        auto level = read_i32(base + *level_at);
        auto nproc = read_i32(base + *nproc_at);
        if (!pkfn || *pkfn == 0 || !level || !nproc || *nproc < 1) {
            continue;
        }
        if (child) {
            teams[c] = forked_region{*level, *nproc, *pkfn};
        } else {
            own_team = forked_region{*level, *nproc, *pkfn};
        }
    }
    if (teams.empty() && own_team) {
        return own_team;
    }
    if (teams.size() != 1) {
        log::write(log::channel::plugin, "OMPD: {} teams in __kmp_fork_call's frame forked by thread {} from {:#x}",
                   teams.size(), tid, *current_team);
        return std::nullopt;
    }
    return teams.begin()->second;
}

}  // namespace

omp_event read_omp_event(session& s, pid_t tid, std::string_view event) {
    omp_event ev;
    ompd_address_space& as = ompd::require_ompd(s);
    auto t = as.thread_of(tid);
    int number = s.thread_number(tid);
    std::string who = fmt::format("thread {} (LWP {})", number > 0 ? std::to_string(number) : "?", tid);
    if (!t) {
        ev.text = who + " (not an OpenMP thread)";
        return ev;
    }
    auto num = as.icv_number(*t, "thread-num-var");
    set_field(ev, "thread_num", num);
    if (event.starts_with("thread-")) {
        ev.text = fmt::format("OpenMP {}, {}", who, num ? "thread number " + std::to_string(*num) : "");
        return ev;
    }
    if (event == "parallel-begin" && is_forking(s, tid)) {
        auto begun = region_being_forked(s, tid);
        if (!begun) {
            begun = region_from_team_layout(s, tid, as);
        }
        if (begun) {
            set_field(ev, "level", begun->level);
            set_field(ev, "team_size", begun->team_size);
            std::string fn = begun->function ? ompd::describe_code(s, *begun->function) : "?";
            ev.text = fmt::format("parallel region at level {}: team size {}, {}, encountered by {}",
                                  opt_num(begun->level), opt_num(begun->team_size), fn, who);
            return ev;
        }
        // Without the runtime's debug information the new region cannot be seen yet: say
        // so rather than show the enclosing one as if it were the new one.
        ev.text = fmt::format("parallel region begins (the runtime has not made it current yet, and neither "
                              "the debug information for __kmp_fork_call nor the OMPD layout symbols of {} "
                              "show the new team), encountered by {}",
                              plugins::probe_openmp_runtime(as.target()).runtime_path.string(), who);
        return ev;
    }
    if (event.starts_with("parallel-")) {
        // At ompd_bp_parallel_end the thread's current region is the one that ends (OpenMP
        // 5.1 §20.6.3); so it should be at ompd_bp_parallel_begin, but see above.
        auto p = as.current_parallel(*t);
        if (!p) {
            ev.text = who + ", no parallel region";
            return ev;
        }
        std::string fn;
        if (auto task0 = as.task_in_parallel(*p, 0)) {
            if (auto f = as.task_function(*task0)) {
                fn = ompd::describe_code(s, *f);
            }
        }
        auto level = as.icv_number(*p, "levels-var");
        auto team = as.icv_number(*p, "team-size-var");
        set_field(ev, "level", level);
        set_field(ev, "active_level", as.icv_number(*p, "active-levels-var"));
        set_field(ev, "team_size", team);
        ev.text = fmt::format("parallel region at level {}: team size {}, {}, encountered by {}", opt_num(level),
                              opt_num(team), fn, who);
        return ev;
    }
    // task-begin / task-end: the thread's current task is the task that begins or ends.
    auto tk = as.current_task(*t);
    if (!tk) {
        ev.text = who + ", no task";
        return ev;
    }
    std::string fn;
    if (auto f = as.task_function(*tk)) {
        fn = ompd::describe_code(s, *f);
    }
    bool implicit = as.icv_number(*tk, "implicit-task-var").value_or(0) != 0;
    bool final = as.icv_number(*tk, "final-task-var").value_or(0) != 0;
    ev.fields["implicit"] = implicit ? 1 : 0;
    ev.fields["final"] = final ? 1 : 0;
    ev.fields["task_flags"] = (implicit ? task_flag_implicit : task_flag_explicit) | (final ? task_flag_final : 0);
    std::string team;
    if (auto p = as.task_parallel(*tk)) {
        auto size = as.icv_number(*p, "team-size-var");
        set_field(ev, "team_size", size);
        set_field(ev, "level", as.icv_number(*p, "levels-var"));
        set_field(ev, "active_level", as.icv_number(*p, "active-levels-var"));
        team = ", team size " + opt_num(size);
    }
    ev.text = fmt::format("{} task {}{}, on {}", implicit ? "implicit" : "explicit", fn, team, who);
    return ev;
}

// ---- the runtime watch ---------------------------------------------------------------

void watch_ompd_dll_locations(session& s) {
    tracer::process* proc = s.process();
    if (proc == nullptr || !proc->is_alive()) {
        return;
    }
    ompd::omp_process_state& st = ompd::process_state(s);
    if (st.dll_valid_site && st.dll_valid_pid == proc->pid()) {
        return;  // planted already (or hit already) in this process
    }
    auto probe = plugins::probe_openmp_runtime(*proc);
    if (probe.what != plugins::omp_runtime_probe::kind::llvm_ompd) {
        return;
    }
    auto at = probe.event_addresses.find("ompd_dll_locations_valid");
    if (at == probe.event_addresses.end()) {
        return;
    }
    try {
        proc->add_breakpoint_site(at->second, true);
        st.dll_valid_site = at->second.addr();
        st.dll_valid_pid = proc->pid();
        log::write(log::channel::plugin, "OMPD: internal breakpoint on ompd_dll_locations_valid at {:#x}",
                   at->second.addr());
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "OMPD: cannot plant on ompd_dll_locations_valid: {}", e.what());
    }
}

bool is_ompd_dll_locations_site(session& s, std::uint64_t addr) {
    const ompd::omp_process_state& st = ompd::process_state(s);
    return s.process() != nullptr && st.dll_valid_site == addr && st.dll_valid_pid == s.process()->pid();
}

std::optional<ompd_dll_locations_outcome> on_ompd_dll_locations_valid(session& s, pid_t tid, std::uint64_t addr) {
    if (!is_ompd_dll_locations_site(s, addr)) {
        return std::nullopt;
    }
    tracer::process* proc = s.process();
    ompd::omp_library_state& st = ompd::library_state(s);
    // The runtime passes here once, when ompd_dll_locations is filled: the site has done
    // its job (the address stays recorded so that it is not planted again).
    try {
        proc->remove_breakpoint_site(virt_addr(addr));
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "OMPD: remove ompd_dll_locations_valid site: {}", e.what());
    }
    auto probe = plugins::probe_openmp_runtime(*proc);
    std::string names;
    for (const auto& l : probe.dll_locations) {
        names += (names.empty() ? "" : ", ") + l;
    }
    log::write(log::channel::plugin, "OMPD: thread {} at ompd_dll_locations_valid; the runtime names {}", tid,
               names);
    ompd_dll_locations_outcome out;
    if (st.library) {
        return out;
    }
    try {
        ompd::ensure_library(st, probe, plugin_host_policy(s.plugin_policy()));
        out.loaded = ompd_library_loaded{st.library->path().string(), st.library_source, st.library->api_version(),
                                         st.library->version_string()};
    } catch (const std::exception& e) {
        st.library_problem = e.what();
        out.problem = e.what();
    }
    return out;
}

}  // namespace ompdbg::debugger
