// finish, until/advance LOCATION and running a thread to an address (run/stepping.hpp).

#include <algorithm>
#include <cstring>
#include <string>

#include <dwarf.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/run/stepping.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/dwarf/call_abi.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "run/step_engine.hpp"

namespace ompdbg::debugger {

using namespace step_engine;

namespace {

/// Breakpoint sites planted for one run of the target (until, advance, a return address)
/// and removed when the run ends, however it ends: each from the moment it is planted, and
/// not at all once the process is gone.
class temporary_sites {
public:
    explicit temporary_sites(session& s) : s_(s) {}
    temporary_sites(const temporary_sites&) = delete;
    temporary_sites& operator=(const temporary_sites&) = delete;
    ~temporary_sites() {
        auto* p = s_.process();
        if (!p || !p->is_alive()) {
            return;
        }
        for (auto a : addrs_) {
            try {
                p->remove_breakpoint_site(virt_addr(a));
            } catch (const std::exception&) {
            }
        }
    }
    void add(std::uint64_t addr) {
        s_.require_process().add_breakpoint_site(virt_addr(addr));
        addrs_.push_back(addr);
    }

private:
    session& s_;
    std::vector<std::uint64_t> addrs_;
};

/// The bytes of a returned aggregate of at most 16 bytes, gathered from rax/rdx and
/// xmm0/xmm1 eightbyte by eightbyte as the psABI assigns them (dwarf/call_abi.hpp, shared
/// with function calls); nullopt when it is not returned in registers.
std::optional<std::vector<std::byte>> small_aggregate_return(const dwarf::type& t, const tracer::registers& regs) {
    dwarf::return_registers r;
    r.rax = regs.gp().rax;
    r.rdx = regs.gp().rdx;
    std::memcpy(r.xmm0.data(), regs.fp_regs().xmm_space, 16);
    std::memcpy(r.xmm1.data(), regs.fp_regs().xmm_space + 4, 16);
    return dwarf::returned_bytes(t, r);
}

/// gdb's "finish" out of an inlined frame (finish_command): there is no return to run to,
/// so it steps in the calling frame with an empty range and steps over calls: it stops as
/// soon as the pc is in no copy called from that frame (or at the call site of a next copy).
void finish_inlined(step_context& cx, pid_t tid, const stack_frame& f) {
    session& s = cx.s;
    auto& p = s.require_process();
    const auto& frames = s.stack(tid);
    std::size_t caller = static_cast<std::size_t>(f.level) + 1;
    if (caller >= frames.size() || !frames[caller].function || frames[caller].physical_index != f.physical_index) {
        error::send("\"finish\" not meaningful in the outermost frame.");
    }
    step_state st;
    std::uint64_t pc = p.find_thread(tid)->regs().pc();
    set_range(st, p, pc);
    st.range.reset();
    st.line = 0;
    st.file.clear();
    st.start_pc = pc;
    st.cfa = frame_cfa(p, tid);
    st.frame_changed = true;   // the stop shows the caller's frame line
    st.always_frame_line = true;
    st.frame_die = frames[caller].function->die.addr;
    step_loop(cx, tid, step_mode::next, st);
}

/// The value function `f` returned, read from the registers it returned with (rax/rdx,
/// xmm0/xmm1, or the memory rax points to) as the SysV ABI puts it; nullopt for void,
/// without DWARF, or where gdb prints nothing.
std::optional<dwarf::value> returned_value(tracer::process& p, const stack_frame& f, const tracer::registers& regs) {
    if (!f.function) {
        return std::nullopt;
    }
    Dwarf_Die die = f.function->die;
    Dwarf_Attribute attr;
    Dwarf_Die type_die;
    if (!dwarf_attr_integrate(&die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type_die)) {
        return std::nullopt;   // void
    }
    if (dwarf_tag(&type_die) == DW_TAG_unspecified_type) {
        return std::nullopt;   // gdb reads it as void (an assembler function's, __strlen_evex)
    }
    dwarf::type t(type_die);
    if (t.is_void()) {
        return std::nullopt;
    }
    dwarf::value v;
    v.val_type = t;
    std::uint64_t size = t.size();
    auto stripped = t.strip_cv_typedef();
    if (stripped.is_aggregate() && size > 16) {
        v.address = regs.gp().rax;
        v.bytes.resize(size);
        p.read_memory(virt_addr(regs.gp().rax), v.bytes);
    } else if (stripped.kind() == dwarf::type_kind::base && stripped.encoding() == dwarf::base_encoding::floating &&
               size <= 16) {
        // floating point: xmm0
        v.bytes.resize(size);
        std::memcpy(v.bytes.data(), regs.fp_regs().xmm_space, size);
    } else if (stripped.is_aggregate()) {
        auto bytes = small_aggregate_return(t, regs);
        if (!bytes) {
            return std::nullopt;   // returned in memory or x87 registers we do not decode: gdb prints nothing
        }
        v.bytes = std::move(*bytes);
    } else {
        std::uint64_t words[2] = {regs.gp().rax, regs.gp().rdx};
        v.bytes.resize(std::min<std::uint64_t>(size, 16));
        std::memcpy(v.bytes.data(), words, v.bytes.size());
    }
    return v;
}

}  // namespace

finish_result finish_frame(session& s, stop_reporter& report) {
    auto& p = s.require_process();
    step_context cx{s, report};
    finish_result result;
    pid_t tid = s.selected_tid();
    auto frames = s.stack(tid);   // a copy: the cache is dropped on resume
    auto level = static_cast<std::size_t>(std::max(0, s.selected_frame()));
    if (level >= frames.size()) {
        error::send("No stack.");
    }
    if (level + 1 >= frames.size()) {
        error::send("\"finish\" not meaningful in the outermost frame.");
    }
    const stack_frame& f = frames[level];
    if (f.is_inlined && (f.physical_index != 0 || f.level != 0 || !f.function)) {
        error::send("\"finish\" out of an inlined function in an outer frame is not supported.");
    }
    report.finishing(f);
    if (f.is_inlined) {
        finish_inlined(cx, tid, f);
        return result;
    }
    const stack_frame& caller = frames[level + 1];
    std::uint64_t ret = caller.pc();
    std::uint64_t cfa = f.physical.cfa.addr();
    if (run_to_address(s, report, tid, ret, cfa - 8)) {
        return result;
    }
    // Out of a function called from the debugger and abandoned: its caller comes back.
    auto returned = infcall::pop_abandoned_return(s, tid);
    s.select_thread(tid);
    report.step_ended(tid, true);
    result.returned = true;
    // The front end's stop (hook-stop) may have run the target on: no value then.
    auto* thr = s.process() == &p ? p.find_thread(tid) : nullptr;
    if (!thr) {
        return result;
    }
    result.value = returned_value(p, f, returned ? *returned : thr->regs());
    return result;
}

void run_until_location(session& s, stop_reporter& report, std::string_view location) {
    auto& p = s.require_process();
    pid_t tid = s.selected_tid();
    std::string why;
    auto locs = resolve_spec(s, std::string(location), why);
    if (locs.empty()) {
        error::send(why);
    }
    // Stop at the location, or when the current frame returns (gdb's until/advance).
    std::uint64_t cfa = frame_cfa(p, tid);
    std::uint64_t ret = p.read<std::uint64_t>(virt_addr(cfa - 8));
    temporary_sites planted(s);
    for (auto& l : locs) {
        planted.add(l.address.addr());
    }
    planted.add(ret);
    while (true) {
        auto stop = resume_and_wait(s, false);
        if (stop.kind == tracer::stop_kind::breakpoint && stop.tid == tid) {
            std::uint64_t at = stop.breakpoint_addr ? stop.breakpoint_addr->addr() : 0;
            bool ours = at == ret ? p.find_thread(tid)->regs().sp() >= cfa
                                  : std::any_of(locs.begin(), locs.end(), [&](auto& l) { return l.address.addr() == at; });
            if (ours) {
                if (!breakpoints_at(s, at).empty() && report.breakpoint_hit(tid, at)) {
                    return;
                }
                if (at == ret) {
                    // Out of a function called from the debugger and abandoned: its caller
                    // comes back, as for `finish` (gdb pops the dummy frame).
                    infcall::pop_abandoned_return(s, tid);
                }
                s.select_thread(tid);
                report.step_ended(tid, true);
                return;
            }
        }
        if (stop.kind == tracer::stop_kind::breakpoint) {
            std::uint64_t at = stop.breakpoint_addr ? stop.breakpoint_addr->addr() : 0;
            if (breakpoints_at(s, at).empty()) {
                continue;
            }
        }
        if (report.stop(stop)) {
            return;
        }
    }
}

std::optional<tracer::stop_reason> run_to_address(session& s, stop_reporter& report, pid_t tid,
                                                  std::uint64_t addr, std::uint64_t min_sp) {
    auto& proc = s.require_process();
    temporary_sites planted(s);
    planted.add(addr);
    while (true) {
        auto why = resume_and_wait(s, false);
        if (why.kind == tracer::stop_kind::breakpoint) {
            std::uint64_t at = why.breakpoint_addr ? why.breakpoint_addr->addr() : 0;
            if (at == addr && why.tid == tid) {
                auto* t = proc.find_thread(tid);
                if (t && t->regs().sp() > min_sp) {
                    return std::nullopt;
                }
            }
            if (at == addr && breakpoints_at(s, addr).empty()) {
                continue;   // ours, but another thread or a deeper recursion level
            }
        }
        if (report.stop(why)) {
            return why;
        }
    }
}

}  // namespace ompdbg::debugger
