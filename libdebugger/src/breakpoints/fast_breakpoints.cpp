// Fast breakpoints (fast_breakpoints.hpp): the agent in the target, its control block, and
// the jump pads of the tracer, matched to the session's breakpoints.

#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"

#include "breakpoints/fast_agent.hpp"

#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"

#include "ompdbg/agent/agent_abi.h"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/agent_expr.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <dlfcn.h>

#ifndef OMPDBG_AGENT_LIBRARY
#define OMPDBG_AGENT_LIBRARY ""
#endif

namespace ompdbg::debugger {

namespace fs = std::filesystem;

namespace {

/// Fast breakpoints in the session (`session::model_state()`).
struct launch_state {
    std::string launch_refusal;   ///< why the agent was not preloaded at the last launch
};

bool env_says_off() {
    const char* e = std::getenv("OMPDBG_FAST_BREAKPOINTS");
    if (e == nullptr) {
        return false;
    }
    std::string v(e);
    return v == "off" || v == "0" || v == "no";
}

/// Whether `bp` is a `catch omp EVENT` catchpoint, whose hits the agent may filter and
/// count at the runtime's ompd_bp_* function like a breakpoint's.
bool is_omp_catchpoint(const breakpoint& bp) {
    return bp.catch_what.rfind("omp ", 0) == 0;
}

/// Whether a breakpoint has hits the agent can filter, ignore, count or print without a
/// stop: a condition, an ignore count, commands that only count (`silent`, `continue`), a
/// dprintf.
bool wants_agent(session& s) {
    for (auto& [n, bp] : s.breakpoints()) {
        if ((bp.catch_what.empty() || is_omp_catchpoint(bp)) &&
            (!bp.condition.empty() || bp.ignore_count > 0 || only_counts(bp) || bp.dprintf)) {
            return true;
        }
    }
    return false;
}

}  // namespace

agent_state& agent_of(session& s, tracer::process& proc) {
    auto& st = s.current_inferior().model_state.get<agent_state>();
    if (st.process != &proc || st.pid != proc.pid()) {
        st = agent_state{};
        st.process = &proc;
        st.pid = proc.pid();
    }
    if (st.control != 0) {
        return st;
    }
    for (const auto& m : proc.modules()) {
        if (m.path.filename() != "libompdbg_agent.so" || !m.elf) {
            continue;
        }
        auto ctl = m.elf->find_symbols("ompdbg_agent_control");
        auto ev = m.elf->find_symbols("ompdbg_agent_evaluate");
        auto sync = m.elf->find_symbols("ompdbg_agent_sync");
        auto ring = m.elf->find_symbols("ompdbg_agent_ring");
        if (ctl.empty() || ev.empty() || sync.empty() || ring.empty()) {
            continue;
        }
        std::uint64_t control = ctl.front().value + m.load_bias;
        // The magic, then the version: an agent of another build formats differently.
        std::uint64_t head[2] = {0, 0};
        if (proc.try_read_memory(virt_addr(control), std::as_writable_bytes(std::span(head))) != sizeof head ||
            head[0] != OMPDBG_AGENT_MAGIC || static_cast<std::uint32_t>(head[1]) != OMPDBG_AGENT_VERSION) {
            continue;
        }
        st.control = control;
        st.evaluate = ev.front().value + m.load_bias;
        st.sync = sync.front().value + m.load_bias;
        st.ring = ring.front().value + m.load_bias;
    }
    return st;
}

agent_state* loaded_agent(session& s) {
    auto* proc = s.process();
    if (proc == nullptr || !proc->is_alive()) {
        return nullptr;
    }
    auto* a = s.current_inferior().model_state.find<agent_state>();
    if (a == nullptr || a->process != proc || a->pid != proc->pid() || a->control == 0) {
        return nullptr;
    }
    return a;
}

namespace {

void set_record_enabled(tracer::process& proc, const agent_state& a, unsigned i, bool on) {
    write_record_field(proc, a, i, offsetof(ompdbg_agent_site, enabled), on ? 1 : 0, 4);
}

/// What the agent does at a breakpoint's sites.
struct site_plan {
    bool delegated = false;   ///< ignore count and hit counting in the agent (fast_record)
    std::uint32_t action = OMPDBG_ACTION_STOP;
    std::string signature(const breakpoint& bp) const {
        std::string printf_line = bp.dprintf && !bp.commands.empty() ? bp.commands.front() : "";
        return fmt::format("{}\n{}{}\n{}", bp.condition, action, delegated ? " delegated" : "", printf_line);
    }
};

/// What the agent can do for `bp` (nullopt: nothing worth a pad, every hit stops). The pad
/// filters out hits whose condition is false; for a breakpoint of every thread that stays
/// (not temporary) the agent also ignores hits and counts them, only counts them when the
/// commands are `silent` and `continue`, and prints a dprintf's line. The others act on
/// the stops that remain, as before.
std::optional<site_plan> plan_for(const breakpoint& bp) {
    site_plan p;
    p.delegated = !bp.thread_tid && !bp.temporary;
    if (p.delegated && bp.dprintf) {
        p.action = OMPDBG_ACTION_PRINT;
    } else if (p.delegated && only_counts(bp)) {
        p.action = OMPDBG_ACTION_COUNT;
    }
    if (bp.condition.empty() && !(p.delegated && (bp.ignore_count > 0 || p.action != OMPDBG_ACTION_STOP))) {
        return std::nullopt;
    }
    return p;
}

/// Whether a pad still helps `bp` when the agent cannot print its line: a condition to
/// filter or an ignore count to keep.
bool useful_without_printing(const breakpoint& bp, const site_plan& plan) {
    return !bp.condition.empty() || (plan.delegated && bp.ignore_count > 0);
}

/// Why breakpoint `bp` cannot go to the agent at all (empty: it may).
std::string ineligible(session& s, const breakpoint& bp, std::uint64_t addr) {
    if (!is_omp_catchpoint(bp) && (!bp.catch_what.empty() || bp.test_condition)) {
        return "a catchpoint";
    }
    int sharing = 0;
    for (auto& [n, other] : s.breakpoints()) {
        if (!other.enabled) {
            continue;
        }
        for (auto& l : other.locations) {
            sharing += l.enabled && l.address.addr() == addr;
        }
    }
    return sharing > 1 ? "another breakpoint at the same address" : "";
}

/// Where `mod`'s TLS block is from the thread pointer (agent_compile_options::tls_block):
/// libthread_db's address of the block in each thread minus its fs_base, the same in every
/// thread and just below the thread pointer for a module in the static TLS area (x86-64
/// variant II). Before the loader has set up TLS (sites are planted at its first library
/// event) the executable's own block is where the ABI puts it, right below the thread
/// pointer (as frame_context::tls_address without libthread_db). nullopt when the module
/// has no TLS, a library's block is not known yet, or it is elsewhere (the dynamic TLS of
/// a module loaded by dlopen).
std::optional<std::int64_t> static_tls_block(session& s, tracer::process& proc, const tracer::loaded_module& mod) {
    constexpr std::int64_t static_tls_room = 1 << 20;
    if (!mod.elf || !mod.elf->tls()) {
        return std::nullopt;
    }
    auto* db = s.thread_db();
    auto ready = [&] {
        for (auto* t : proc.threads()) {
            auto fs = t->regs().read("fs_base");
            if (!fs || *fs == 0) {
                return false;
            }
        }
        return db != nullptr;
    };
    if (!ready()) {
        auto seg = mod.elf->tls();
        std::uint64_t align = std::max<std::uint64_t>(seg->align, 1);
        if (!mod.is_executable || seg->vaddr % align != 0) {
            return std::nullopt;
        }
        return -static_cast<std::int64_t>((seg->memsz + align - 1) / align * align);
    }
    std::optional<std::int64_t> block;
    try {
        for (auto* t : proc.threads()) {
            auto fs = t->regs().read("fs_base").value_or(0);
            auto d = static_cast<std::int64_t>(db->tls_address(t->tid(), mod, 0) - fs);
            if (d >= 0 || d < -static_tls_room || (block && *block != d)) {
                return std::nullopt;
            }
            block = d;
        }
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "fast breakpoints: TLS of {}: {}", mod.path.string(), e.what());
        return std::nullopt;
    }
    return block;
}

/// The condition's bytecode; a breakpoint without one has the condition `1`. A `catch
/// omp` condition names the event's fields (omp_event_agent_fields).
dwarf::agent_compile_result compile_condition(session& s, tracer::process& proc, const breakpoint& bp,
                                              const tracer::loaded_module& mod, const breakpoint_location& loc) {
    if (!bp.condition.empty()) {
        dwarf::agent_compile_options options;
        if (is_omp_catchpoint(bp)) {
            options.fields = omp_event_agent_fields(s, mod, bp.catch_what);
        }
        options.tls_block = static_tls_block(s, proc, mod);
        return dwarf::compile_agent_condition(bp.condition, *mod.elf->debug(), loc.file_address, mod.load_bias,
                                              options);
    }
    dwarf::agent_compile_result r;
    r.code = {OMPDBG_OP_CONST, 1, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_END};
    return r;
}

/// Compiles the condition and plants the pad; the reason when it cannot.
std::string make_fast(session& s, tracer::process& proc, agent_state& a, const breakpoint& bp, const site_plan& plan,
                      const breakpoint_location& loc) {
    const tracer::loaded_module* mod = nullptr;
    for (const auto& m : proc.modules()) {
        if (m.path == loc.module_path && m.elf) {
            mod = &m;
        }
    }
    if (mod == nullptr || mod->elf->debug() == nullptr) {
        return "no debug information at the site";
    }
    const auto& info = *mod->elf->debug();
    auto code = compile_condition(s, proc, bp, *mod, loc);
    if (!code.ok()) {
        return code.reason;
    }
    auto chain = info.function_chain_at(loc.file_address);
    if (chain.empty()) {
        return "no function around the site";
    }
    tracer::process::fast_site_request req;
    for (auto& [lo, hi] : chain.back().ranges) {
        if (loc.file_address >= lo && loc.file_address < hi) {
            req.function_start = lo + mod->load_bias;
            req.function_end = hi + mod->load_bias;
        }
    }
    ompdbg_agent_site rec{};
    rec.in_use = 1;
    rec.enabled = 1;
    rec.code_len = static_cast<std::uint32_t>(code.code.size());
    rec.action = plan.action;
    rec.ignore = plan.delegated ? static_cast<std::uint64_t>(std::max(0, bp.ignore_count)) : 0;
    if (plan.action == OMPDBG_ACTION_PRINT) {
        auto why = compile_print(bp, info, loc.file_address, mod->load_bias, rec);
        if (!why.empty()) {
            a.print_notes[bp.number] = why;
            if (!useful_without_printing(bp, plan)) {
                return "dprintf: " + why;
            }
            rec.action = OMPDBG_ACTION_STOP;   // the pad filters, ompdbg prints
        } else {
            a.print_notes.erase(bp.number);
        }
    }
    std::memcpy(rec.code, code.code.data(), code.code.size());
    if (a.next_record >= OMPDBG_AGENT_MAX_SITES) {
        return "the agent has no free site record";
    }
    unsigned i = a.next_record++;
    proc.write_memory(virt_addr(record_addr(a, i)), std::as_bytes(std::span(&rec, 1)));
    req.evaluate = virt_addr(a.evaluate);
    req.record = virt_addr(record_addr(a, i));
    if (!bp.condition.empty()) {
        req.condition = code.code;   // a pad without one (`1`) would only call the agent later
    }
    if (rec.action == OMPDBG_ACTION_COUNT) {
        req.counting_control = virt_addr(a.control);
    }
    if (auto why = proc.make_site_fast(loc.address, req)) {
        set_record_enabled(proc, a, i, false);
        return "int3 kept: " + *why;
    }
    fast_record r;
    r.index = i;
    r.breakpoint = bp.number;
    r.signature = plan.signature(bp);
    r.delegated = plan.delegated;
    r.passes_hits = rec.action != OMPDBG_ACTION_STOP;
    r.ignore_known = rec.ignore;
    r.passed_seen = passed_so_far(proc, a, i);
    a.fast[loc.address.addr()] = r;
    a.printing = a.printing || rec.action == OMPDBG_ACTION_PRINT;
    return "";
}

void say_no_agent(session& s, const std::string& why) {
    s.observer().agent_unused(why);
}

/// The agent library when it may be loaded; else empty and `why`.
fs::path usable_agent(session& s, std::string& why) {
    // OMPDBG_AGENT_LIBRARY names another copy (tests: an untrusted one); else the build's.
    const char* other = std::getenv("OMPDBG_AGENT_LIBRARY");
    fs::path agent(other != nullptr && *other != '\0' ? other : OMPDBG_AGENT_LIBRARY);
    if (agent.empty() || !fs::exists(agent)) {
        why = fmt::format("the agent {} is missing", agent.string());
        return {};
    }
    if (auto refusal = s.plugin_policy().refusal(agent)) {
        why = "the agent is refused: " + *refusal;
        return {};
    }
    return agent;
}

/// Whether `m` is the dynamic loader (ld-linux-x86-64.so.2).
bool is_loader(const tracer::loaded_module& m) {
    return m.path.filename().string().rfind("ld-linux", 0) == 0;
}

/// Why calling dlopen in `proc` now could deadlock (empty: it cannot): a thread inside the
/// loader or the allocator may hold the lock that dlopen takes, and only the calling
/// thread runs during the call.
std::string lock_holder(session& s, tracer::process& proc) {
    for (auto* t : proc.threads()) {
        const auto& frames = s.stack(t->tid());
        for (std::size_t i = 0; i < frames.size() && i < 12; ++i) {
            const auto* mod = frames[i].module;
            std::string fn = frame_function_name(frames[i]);
            std::string file = mod != nullptr ? mod->path.filename().string() : std::string();
            bool loader = mod != nullptr && is_loader(*mod);
            // The allocator's and the loader's entry points in libc (the program's own
            // functions may be called anything).
            bool locked = file.rfind("libc.so", 0) == 0 &&
                          (fn.find("malloc") != std::string::npos || fn.find("free") != std::string::npos ||
                           fn.find("alloc") != std::string::npos || fn.find("dlopen") != std::string::npos ||
                           fn.find("dlclose") != std::string::npos || fn.find("dl_iterate_phdr") != std::string::npos);
            if (loader || locked) {
                return fmt::format("thread {} is inside {} ({})", s.thread_number(t->tid()), fn,
                                   loader ? "the dynamic loader" : "a function that holds a libc lock");
            }
        }
    }
    return "";
}

/// Once a record counts hits the debugger does not see, the agent calls ompdbg_agent_sync
/// at exit, where an internal breakpoint lets the debugger read the last counts. A record
/// that stops at every hit whose condition holds, with no hits to ignore, counts none: its
/// process exits without that stop (all threads stopped, 8 of them in bench_fast_cond). An
/// ignore count set later reaches the record through sync_fast_sites, which plants it then.
void plant_sync_at_exit(tracer::process& proc, agent_state& a) {
    bool counting = false;
    for (auto& [site, rec] : a.fast) {
        counting = counting || (rec.delegated && (rec.passes_hits || rec.ignore_known > 0));
    }
    if (!counting || a.sync_planted) {
        return;
    }
    // Not an internal site of the tracer: under `continue` its hit is reported before the
    // other threads are stopped (process::set_early_breakpoint_reports), and the debugger
    // reads the counts and lets the exiting thread go on alone, where stopping and resuming
    // a team of 8 at exit cost 0.4 ms (workload 14). What the others count after that read
    // was lost with every thread stopped too: they ran on after it.
    proc.add_breakpoint_site(virt_addr(a.sync), false);
    std::uint32_t on = 1;
    proc.write_memory(virt_addr(a.control + offsetof(ompdbg_agent_control, sync_at_exit)),
                      std::as_bytes(std::span(&on, 1)));
    a.sync_planted = true;
}

}  // namespace

// An attached process has no agent (it was not started with it): it is loaded with a call
// of dlopen in the selected thread when the first condition wants it, once per process.
void load_agent_on_demand(session& s) {
    auto* proc = s.process();
    if (proc == nullptr || !proc->is_alive() || proc->connection() != "native" || !proc->is_attached() ||
        !fast_breakpoints_on(s) || !wants_agent(s)) {
        return;
    }
    auto& a = agent_of(s, *proc);
    if (a.control != 0 || a.injected) {
        return;
    }
    bool dynamic = false;
    for (const auto& m : proc->modules()) {
        dynamic = dynamic || is_loader(m);
    }
    std::string why;
    fs::path agent = dynamic ? usable_agent(s, why) : fs::path();
    if (!dynamic) {
        why = "the program is statically linked, the agent cannot be loaded into it";
    } else if (!agent.empty()) {
        why = lock_holder(s, *proc);
        if (!why.empty()) {
            say_no_agent(s, "the agent is not loaded now: " + why);
            return;   // another condition set later tries again
        }
    }
    a.injected = true;
    if (agent.empty()) {
        say_no_agent(s, why);
        return;
    }
    try {
        frame_context ctx = frame_context::for_selection(s);
        std::string call = fmt::format("(long)dlopen(\"{}\", {})", agent.string(), RTLD_NOW);
        if (dwarf::as_integer(dwarf::evaluate(call, ctx)) == 0) {
            say_no_agent(s, "dlopen could not load the agent " + agent.string());
            return;
        }
    } catch (const std::exception& e) {
        say_no_agent(s, std::string("the agent could not be loaded: ") + e.what());
        return;
    }
    s.observer().agent_loaded(agent, proc->pid());
}

bool fast_breakpoints_on(session& s) {
    if (s.settings().breakpoint_fast) {
        return *s.settings().breakpoint_fast;
    }
    return !env_says_off();
}

std::vector<std::string> agent_launch_environment(session& s, std::vector<std::string> env) {
    auto& st = s.model_state().get<launch_state>();
    st.launch_refusal.clear();
    if (!fast_breakpoints_on(s) || !wants_agent(s)) {
        return env;
    }
    auto say = [&](const std::string& why) {
        st.launch_refusal = why;
        say_no_agent(s, why);
    };
    std::string refusal;
    fs::path agent = usable_agent(s, refusal);
    if (agent.empty()) {
        say(refusal);
        return env;
    }
    if (s.program()) {
        try {
            auto elf = dwarf::elf_file::open(*s.program());
            if (!elf->section(".interp")) {
                say("the program is statically linked, the agent cannot be loaded into it");
                return env;
            }
        } catch (const std::exception&) {
        }
    }
    std::string preload = agent.string();
    for (auto it = env.begin(); it != env.end(); ++it) {
        if (it->rfind("LD_PRELOAD=", 0) == 0) {
            preload = it->substr(11) + ":" + preload;
            env.erase(it);
            break;
        }
    }
    if (const char* outer = std::getenv("LD_PRELOAD"); outer != nullptr && *outer != '\0' &&
                                                       preload.find(outer) == std::string::npos) {
        preload = std::string(outer) + ":" + preload;
    }
    env.push_back("LD_PRELOAD=" + preload);
    return env;
}

void sync_fast_sites(session& s) {
    auto* proc = s.process();
    if (proc == nullptr || !proc->is_alive() || proc->connection() != "native") {
        return;
    }
    auto& a = agent_of(s, *proc);
    try {
        if (a.control == 0) {
            return;   // no agent in this process: every site keeps its int3
        }
        if (!a.forked_cleared) {
            // A followed fork child inherited the parent's "forked" flag: this copy is debugged.
            std::uint32_t zero = 0;
            proc->write_memory(virt_addr(a.control + offsetof(ompdbg_agent_control, forked)),
                               std::as_bytes(std::span(&zero, 1)));
            a.forked_cleared = true;
        }
        collect_fast_counters(s);   // before a record goes: its last counts
        std::set<std::uint64_t> wanted;
        a.notes.clear();
        int rank = s.current_inferior().rank;
        for (auto& [n, bp] : s.breakpoints()) {
            auto plan = plan_for(bp);
            if (bp.dprintf && (bp.thread_tid || bp.temporary)) {
                // Its hits stop for ompdbg (the pad filters a condition): say why.
                a.print_notes[n] = bp.thread_tid ? "a dprintf of one thread" : "a temporary dprintf";
            }
            if (!bp.enabled || !plan || !bp.applies_to_rank(rank)) {
                continue;
            }
            for (auto& loc : bp.locations) {
                if (!loc.enabled || !s.planted_sites().count(loc.address.addr())) {
                    continue;
                }
                std::uint64_t addr = loc.address.addr();
                std::string why = fast_breakpoints_on(s) ? ineligible(s, bp, addr) : "fast breakpoints are off";
                if (!why.empty()) {
                    a.notes[n] = why;
                    continue;
                }
                auto it = a.fast.find(addr);
                if (it != a.fast.end() && it->second.breakpoint == n && it->second.signature == plan->signature(bp) &&
                    proc->is_site_fast(loc.address)) {
                    wanted.insert(addr);
                    continue;
                }
                if (it != a.fast.end()) {
                    proc->make_site_slow(loc.address);
                    set_record_enabled(*proc, a, it->second.index, false);
                    a.fast.erase(it);
                }
                why = make_fast(s, *proc, a, bp, *plan, loc);
                if (why.empty()) {
                    wanted.insert(addr);
                } else {
                    a.notes[n] = why;
                    log::write(log::channel::cli, "breakpoint {} at {:#x} stays with the debugger: {}", n, addr, why);
                }
            }
        }
        for (auto it = a.fast.begin(); it != a.fast.end();) {
            if (wanted.count(it->first)) {
                ++it;
                continue;
            }
            proc->make_site_slow(virt_addr(it->first));
            set_record_enabled(*proc, a, it->second.index, false);
            it = a.fast.erase(it);
        }
        push_ignore_counts(s, a);
        plant_sync_at_exit(*proc, a);
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "fast breakpoints: {}", e.what());
    }
}

std::string condition_path_note(session& s, const breakpoint& bp) {
    // gdb's words for a condition the target evaluates ("(target evaluation)"); a process
    // without the agent (fast breakpoints off, attached, remote) says nothing, as gdb.
    const auto* a = loaded_agent(s);
    if (a == nullptr || bp.condition.empty()) {
        return "";
    }
    auto* proc = s.process();
    for (auto& loc : bp.locations) {
        if (a->fast.count(loc.address.addr()) && proc->is_site_fast(loc.address)) {
            return " (target evaluation)";
        }
    }
    auto note = a->notes.find(bp.number);
    return note == a->notes.end() ? "" : " (host evaluation: " + note->second + ")";
}

bool counted_in_target(session& s, const breakpoint& bp) {
    const auto* a = loaded_agent(s);
    if (a == nullptr || (bp.ignore_count <= 0 && !only_counts(bp))) {
        return false;
    }
    for (auto& loc : bp.locations) {
        auto it = a->fast.find(loc.address.addr());
        if (it != a->fast.end() && it->second.breakpoint == bp.number && it->second.delegated &&
            s.process()->is_site_fast(loc.address)) {
            return true;
        }
    }
    return false;
}

std::string print_path_note(session& s, const breakpoint& bp) {
    const auto* a = loaded_agent(s);
    if (a == nullptr || !bp.dprintf) {
        return "";
    }
    for (auto& loc : bp.locations) {
        auto it = a->fast.find(loc.address.addr());
        if (it != a->fast.end() && it->second.breakpoint == bp.number && s.process()->is_site_fast(loc.address) &&
            !a->print_notes.count(bp.number) && it->second.delegated) {
            return "\tprinted in the target";
        }
    }
    // Why the agent cannot print it, else why the site has no pad at all.
    auto note = a->print_notes.find(bp.number);
    if (note == a->print_notes.end()) {
        note = a->notes.find(bp.number);
        if (note == a->notes.end()) {
            return "";
        }
    }
    return "\tprinted by the debugger: " + note->second;
}

std::vector<std::string> rank_path_notes(session& s, const breakpoint& bp) {
    std::vector<std::string> out;
    if (s.inferiors().size() < 2 || (bp.condition.empty() && !bp.dprintf) || bp.pending || bp.locations.empty()) {
        return out;
    }
    // Each rank is looked at as the current inferior (the notes read its agent), then the
    // current one is made current again, whatever happens.
    struct restore_current {
        session& s;
        std::size_t index;
        ~restore_current() { s.switch_to(index); }
    } restore{s, s.current_index()};
    std::map<std::string, std::vector<int>> ranks_by_path;
    bool any_agent = false;
    for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
        auto& inf = *s.inferiors()[i];
        if (inf.rank < 0 || !inf.process || !inf.process->is_alive()) {
            continue;
        }
        s.switch_to(i);
        std::string note = bp.dprintf ? print_path_note(s, bp) : condition_path_note(s, bp);
        const bool has_agent = loaded_agent(s) != nullptr;
        any_agent = any_agent || has_agent;
        const std::string none = has_agent ? "" : " (no agent)";
        std::string path;
        if (bp.dprintf) {
            path = note.empty() ? "printed by the debugger" + none : note.substr(1);
        } else {
            // " (target evaluation)", " (host evaluation: WHY)": the words inside.
            path = note.size() > 3 ? note.substr(2, note.size() - 3) : "host evaluation" + none;
        }
        ranks_by_path[path].push_back(inf.rank);
    }
    if (!any_agent) {
        return out;   // no rank has the agent (fast breakpoints off, remote ranks): gdb's listing
    }
    for (auto& [path, ranks] : ranks_by_path) {
        out.push_back(fmt::format("	{} {}: {}", ranks.size() == 1 ? "rank" : "ranks", format_rank_list(ranks), path));
    }
    return out;
}

}  // namespace ompdbg::debugger
