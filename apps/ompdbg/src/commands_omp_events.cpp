// `catch omp EVENT [if COND]` on the runtime's ompd_bp_* locations, the report of an event,
// and the runtime watch: the internal breakpoint on ompd_dll_locations_valid through which
// the debugger learns which OMPD library the runtime names (OpenMP 5.1 §20.2).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "breakpoint_resolver.hpp"
#include "commands_omp.hpp"
#include "commands_omp_state.hpp"
#include "fast_breakpoints.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace ompdbg::app {

using namespace omp_impl;
using plugins::ompd_address_space;

namespace {

/// ompt_task_flag_t values (omp-tools.h) that `task_flags` is made of.
constexpr std::int64_t task_flag_implicit = 0x2;
constexpr std::int64_t task_flag_explicit = 0x4;
constexpr std::int64_t task_flag_final = 0x20000000;

/// An OpenMP event as read at its ompd_bp_* location: the report line and the fields a
/// `catch omp ... if COND` condition can name.
struct omp_event {
    std::string text;
    std::map<std::string, std::int64_t, std::less<>> fields;
};

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

omp_event read_event(session& s, pid_t tid, std::string_view event) {
    omp_event ev;
    ompd_address_space& as = require_ompd(s);
    auto t = as.thread_of(tid);
    std::string who = fmt::format("thread {} (LWP {})", thread_label(s, tid), tid);
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
            std::string fn = begun->function ? describe_code(s, *begun->function) : "?";
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
                fn = describe_code(s, *f);
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
        fn = describe_code(s, *f);
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

/// Names the event's fields in a condition; everything else (program variables,
/// registers, $convenience) comes from the thread's innermost frame.
class event_context final : public dwarf::eval_context {
public:
    event_context(const omp_event& ev, dwarf::eval_context& frame) : ev_(ev), frame_(frame) {}

    std::optional<dwarf::value> lookup_variable(std::string_view name) override {
        if (auto it = ev_.fields.find(name); it != ev_.fields.end()) {
            dwarf::value v;
            v.val_type = dwarf::type::make_base("long", 8, dwarf::base_encoding::signed_int);
            v.synthetic_type_name = "long";
            v.bytes.resize(8);
            std::memcpy(v.bytes.data(), &it->second, 8);
            return v;
        }
        return frame_.lookup_variable(name);
    }
    std::optional<dwarf::value> lookup_function(std::string_view n) override { return frame_.lookup_function(n); }
    std::optional<dwarf::type> lookup_type(std::string_view n) override { return frame_.lookup_type(n); }
    std::optional<std::uint64_t> read_register(std::string_view n) override { return frame_.read_register(n); }
    void write_register(std::string_view n, std::uint64_t v) override { frame_.write_register(n, v); }
    void read_memory(std::uint64_t a, std::span<std::byte> out) override { frame_.read_memory(a, out); }
    void write_memory(std::uint64_t a, std::span<const std::byte> d) override { frame_.write_memory(a, d); }
    std::optional<std::uint64_t> read_dwarf_register(int r) override { return frame_.read_dwarf_register(r); }
    std::string symbolize(std::uint64_t a) override { return frame_.symbolize(a); }
    std::optional<dwarf::value> history(int i) override { return frame_.history(i); }
    int history_size() override { return frame_.history_size(); }
    std::optional<dwarf::value> lookup_enumerator(std::string_view n) override { return frame_.lookup_enumerator(n); }
    std::optional<dwarf::value> convenience(std::string_view n) override { return frame_.convenience(n); }
    void set_convenience(std::string_view n, const dwarf::value& v) override { frame_.set_convenience(n, v); }
    void write_dwarf_register(int r, std::uint64_t v) override { frame_.write_dwarf_register(r, v); }
    bool language_cplus() override { return false; }

private:
    const omp_event& ev_;
    dwarf::eval_context& frame_;
};

/// The condition of a `catch omp` catchpoint, evaluated over the event's fields. Throws
/// (gdb's "Error in testing condition") when it names something that does not exist.
bool event_condition_holds(session& s, pid_t tid, std::string_view event, const std::string& condition) {
    omp_event ev = read_event(s, tid, event);
    const auto& frames = s.stack(tid);
    if (frames.empty()) {
        error::send("No frame selected.");
    }
    frame_context frame(s, tid, frames.front());
    event_context ctx(ev, frame);
    return dwarf::is_true(dwarf::evaluate(condition, ctx));
}

/// Splits "EVENT if COND".
std::pair<std::string, std::string> split_event_condition(std::string_view args) {
    std::string a(trim(args));
    for (std::size_t i = 0; i + 2 <= a.size(); ++i) {
        bool start_ok = i > 0 && (a[i - 1] == ' ' || a[i - 1] == '\t');
        bool end_ok = i + 2 == a.size() || a[i + 2] == ' ' || a[i + 2] == '\t' || a[i + 2] == '(';
        if (start_ok && end_ok && a.compare(i, 2, "if") == 0) {
            return {std::string(trim(std::string_view(a).substr(0, i))),
                    std::string(trim(std::string_view(a).substr(i + 2)))};
        }
    }
    return {a, {}};
}

}  // namespace

std::string omp_describe_event(session& s, pid_t tid, std::string_view event) {
    try {
        return read_event(s, tid, event).text;
    } catch (const std::exception& e) {
        return std::string("(") + e.what() + ")";
    }
}

namespace {

/// The return addresses of the direct calls (call rel32) of the function `target` in the
/// function `caller` of `runtime` (both local symbols of the OpenMP runtime), read from the
/// process's code.
std::vector<std::uint64_t> calls_from(session& s, const tracer::loaded_module& runtime, const std::string& caller,
                                      const std::string& target) {
    std::vector<std::uint64_t> out;
    auto callers = runtime.elf->find_symbols(caller);
    auto targets = runtime.elf->find_symbols(target);
    if (callers.empty() || targets.empty() || callers.front().size == 0 || callers.front().size > (1u << 20)) {
        return out;
    }
    std::uint64_t start = runtime.to_runtime(callers.front().value).addr();
    std::uint64_t callee = runtime.to_runtime(targets.front().value).addr();
    std::vector<std::uint8_t> code(callers.front().size);
    if (s.process()->try_read_memory(virt_addr(start), std::as_writable_bytes(std::span(code))) != code.size()) {
        return out;
    }
    // A byte scan, not a decode: an e8 that is not an instruction start would have to
    // name ompd_bp_* by accident, and its "return address" is then never on a stack.
    for (std::size_t i = 0; i + 5 <= code.size(); ++i) {
        std::int32_t rel = 0;
        std::memcpy(&rel, code.data() + i + 1, 4);
        if (code[i] == 0xe8 && start + i + 5 + static_cast<std::uint64_t>(static_cast<std::int64_t>(rel)) == callee) {
            out.push_back(start + i + 5);
        }
    }
    return out;
}

}  // namespace

std::vector<dwarf::agent_caller_field> omp_event_agent_fields(session& s, const tracer::loaded_module& runtime,
                                                              std::string_view catch_what) {
    std::vector<dwarf::agent_caller_field> fields;
    for (const char* name : {"team_size", "level", "active_level", "thread_num", "implicit", "final", "task_flags"}) {
        fields.push_back(dwarf::agent_caller_field{name, "", nullptr, 0, {}});
    }
    // The team __kmp_fork_call forks, as region_being_forked reads it at a stop; the team
    // __kmp_join_call ends, the thread's current region that OMPD shows at a stop.
    struct event_call {
        const char* catch_what;
        const char* caller;
        const char* event;
    };
    static constexpr event_call calls[] = {{"omp parallel-begin", "__kmp_fork_call", "ompd_bp_parallel_begin"},
                                           {"omp parallel-end", "__kmp_join_call", "ompd_bp_parallel_end"}};
    const event_call* call = nullptr;
    for (const auto& c : calls) {
        call = catch_what == c.catch_what ? &c : call;
    }
    if (call == nullptr || !runtime.elf || runtime.elf->debug() == nullptr) {
        return fields;
    }
    auto returns = calls_from(s, runtime, call->caller, call->event);
    for (auto& f : fields) {
        if (f.name == "team_size" || f.name == "level") {
            f.expression = f.name == "team_size" ? "team->t.t_nproc" : "team->t.t_level";
            f.info = runtime.elf->debug();
            f.load_bias = runtime.load_bias;
            f.return_addresses = returns;
        }
    }
    return fields;
}

// ---- the runtime watch ---------------------------------------------------------------

void omp_on_library_event(session& s) {
    tracer::process* proc = s.process();
    if (proc == nullptr || !proc->is_alive()) {
        return;
    }
    omp_process_state& st = process_state(s);
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

bool omp_is_internal_site(session& s, std::uint64_t addr) {
    const omp_process_state& st = process_state(s);
    return s.process() != nullptr && st.dll_valid_site == addr && st.dll_valid_pid == s.process()->pid();
}

bool omp_on_internal_breakpoint(session& s, pid_t tid, std::uint64_t addr) {
    if (!omp_is_internal_site(s, addr)) {
        return false;
    }
    tracer::process* proc = s.process();
    omp_library_state& st = library_state(s);
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
    if (st.library) {
        return true;
    }
    try {
        ensure_library(st, probe, s.plugin_policy());
        s.out().event("ompd-library",
                      {{"path", st.library->path().string()},
                       {"source", st.library_source},
                       {"api_version", st.library->api_version()},
                       {"version_string", st.library->version_string()}},
                      fmt::format("[OMPD library {} ({}), {}]", st.library->path().string(),
                                  st.library->version_string(), st.library_source));
    } catch (const std::exception& e) {
        st.library_problem = e.what();
        s.out().error(std::string("warning: OMPD: ") + e.what());
    }
    return true;
}

namespace omp_impl {

/// `catch omp EVENT [if COND]`: a catchpoint on the runtime's ompd_bp_* location (OpenMP
/// 5.1 §20.6), which the runtime passes once per region or task, with OMP_DEBUG=enabled.
/// COND may name the event's fields (team_size, level, active_level, thread_num, and for
/// tasks implicit, final, task_flags) besides the program's variables.
void cmd_catch_omp(session& s, std::string_view args) {
    static const std::vector<std::pair<std::string, std::string>> events = {
        {"parallel-begin", "ompd_bp_parallel_begin"}, {"parallel-end", "ompd_bp_parallel_end"},
        {"task-begin", "ompd_bp_task_begin"},         {"task-end", "ompd_bp_task_end"},
        {"thread-begin", "ompd_bp_thread_begin"},     {"thread-end", "ompd_bp_thread_end"}};
    auto [event, condition] = split_event_condition(args);
    const std::string* symbol = nullptr;
    for (const auto& [name, sym] : events) {
        if (name == event) {
            symbol = &sym;
        }
    }
    if (symbol == nullptr) {
        error::send("Unknown OpenMP event \"" + event +
                    "\": use parallel-begin, parallel-end, task-begin, task-end, thread-begin or "
                    "thread-end.");
    }
    if (!condition.empty()) {
        dwarf::parse_expression(condition);  // a syntax error is reported now, as gdb does
    }
    breakpoint bp;
    bp.spec = *symbol;
    bp.catch_what = "omp " + event;
    bp.condition = condition;
    // The session owns its breakpoints, so it outlives the functions that name it.
    bp.describe_hit = [&s, event](pid_t tid) { return omp_describe_event(s, tid, event); };
    bp.test_condition = [&s, event](pid_t tid, const std::string& cond) {
        return event_condition_holds(s, tid, event, cond);
    };
    std::string why;
    bp.locations = resolve_spec(s, bp.spec, why);
    bp.pending = bp.locations.empty();
    bp.number = s.next_breakpoint_number();
    int number = bp.number;
    s.out().line(fmt::format("Catchpoint {} ({}){}", number, bp.catch_what,
                             bp.pending ? " pending until the OpenMP runtime is loaded" : ""));
    s.out().field("catchpoint",
                  {{"number", number}, {"event", event}, {"condition", condition}, {"pending", bp.pending}});
    s.breakpoints()[number] = std::move(bp);
    if (!condition.empty()) {
        load_agent_on_demand(s);   // an attached process: the agent evaluates it (fast_breakpoints.hpp)
    }
    sync_breakpoint_sites(s);
}

}  // namespace omp_impl

}  // namespace ompdbg::app
