// The mechanics of a call into the program (gdb 13's infcall.c): the dummy frame, the
// registers of the System V ABI (dwarf/call_abi.hpp lays the arguments out), a return
// breakpoint at the entry point, the other threads held, and what is restored when
// (inferior_call.hpp).

#include "ompdbg/debugger/infcall/inferior_call.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/eval/evaluation_hooks.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/call_abi.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/registers.hpp"

namespace ompdbg::debugger::infcall {

tracer::process& require_callable(session& s) {
    if (s.process() == nullptr || !s.process()->is_alive()) {
        error::send("You can't do that without a process to debug.");
    }
    if (!s.settings().may_call_functions) {
        error::send("Cannot call functions in the program: may-call-functions is off.");
    }
    return *s.process();
}

namespace {

constexpr std::uint64_t red_zone = 128;

tracer::thread& require_thread(tracer::process& p, pid_t tid) {
    tracer::thread* t = p.find_thread(tid);
    if (t == nullptr) {
        error::send("No thread selected.");
    }
    return *t;
}

// gdb returns to a dummy frame at the program's entry point: code that never runs again,
// so a breakpoint there is hit by nothing but the call's return.
std::uint64_t entry_point(tracer::process& p) {
    for (const tracer::loaded_module& m : p.modules()) {
        if (m.is_executable && m.elf) {
            return m.to_runtime(m.elf->entry()).addr();
        }
    }
    error::send("Cannot find the program's entry point to return to.");
}

// True while `p` is still the session's process: one that ended during the call may have
// been destroyed with its inferior, and must not be touched.
bool is_current(session& s, const tracer::process& p) { return s.process() == &p; }

// The registers, step-over address and selected frame of the calling thread, put back
// when the call ends unless the user is to see where it stopped (keep()).
class caller_state {
public:
    caller_state(session& s, tracer::process& p, pid_t tid)
        : s_(s), p_(p), tid_(tid), regs_(require_thread(p, tid).regs()), step_over_(p.step_over_pc(tid)),
          signal_(p.pending_signal(tid)), frame_(s.selected_frame()) {
        // gdb's calls resume with no signal: one the thread stopped with (a call abandoned
        // in a SIGSEGV) waits, and comes back with the registers.
        p_.set_pending_signal(tid_, 0);
    }
    caller_state(const caller_state&) = delete;
    caller_state& operator=(const caller_state&) = delete;
    ~caller_state() {
        if (!kept_) {
            restore();
        }
    }
    const tracer::registers& regs() const { return regs_; }
    std::optional<std::uint64_t> step_over() const { return step_over_; }
    void keep() { kept_ = true; }
    void restore() {
        kept_ = true;
        if (!is_current(s_, p_)) {
            return;   // the process ended during the call and is gone
        }
        try {
            if (p_.is_alive()) {
                if (tracer::thread* t = p_.find_thread(tid_)) {
                    t->write_regs(regs_);
                    p_.set_step_over_pc(tid_, step_over_);
                    p_.set_pending_signal(tid_, signal_);
                }
            }
        } catch (const std::exception&) {
            // The thread went away meanwhile: nothing is left to restore.
        }
        s_.on_resume();   // the stacks read during the call are stale now
        if (s_.process() == &p_ && frame_ > 0) {
            try {
                s_.select_frame(frame_);
            } catch (const std::exception&) {
            }
        }
    }

private:
    session& s_;
    tracer::process& p_;
    pid_t tid_;
    tracer::registers regs_;
    std::optional<std::uint64_t> step_over_;
    int signal_;
    int frame_;
    bool kept_ = false;
};

// The other threads stay stopped while the call runs (held), released at the end.
class held_threads {
public:
    held_threads(session& s, tracer::process& p, pid_t running) : s_(s), p_(p) {
        std::vector<pid_t> others;
        for (tracer::thread* t : p.threads()) {
            if (t->tid() != running) {
                others.push_back(t->tid());
            }
        }
        p_.hold_threads(std::move(others));
    }
    held_threads(const held_threads&) = delete;
    held_threads& operator=(const held_threads&) = delete;
    ~held_threads() {
        if (is_current(s_, p_) && p_.is_alive()) {
            p_.hold_threads({});
        }
    }

private:
    session& s_;
    tracer::process& p_;
};

// The breakpoint the call returns to; left planted (release()) when the call is abandoned
// in a stop, so that its later return is recognised (abandoned_calls.hpp).
class return_breakpoint {
public:
    return_breakpoint(session& s, tracer::process& p, std::uint64_t addr) : s_(s), p_(p), addr_(addr) {
        p_.add_breakpoint_site(virt_addr(addr_), true);
    }
    return_breakpoint(const return_breakpoint&) = delete;
    return_breakpoint& operator=(const return_breakpoint&) = delete;
    ~return_breakpoint() {
        if (planted_ && is_current(s_, p_) && p_.is_alive()) {
            try {
                p_.remove_breakpoint_site(virt_addr(addr_));
            } catch (const std::exception&) {
            }
        }
    }
    void release() { planted_ = false; }

private:
    session& s_;
    tracer::process& p_;
    std::uint64_t addr_;
    bool planted_ = true;
};

// Decides a stop that interrupted the call (decide_stop does the model's part of it) and
// has the front end show it; true when it is a stop for the user (the call is abandoned).
// With no front end's hooks, the decision alone says.
bool show_stop(session& s, const tracer::stop_reason& why) {
    const stop_report r = decide_stop(s, why);
    if (evaluation_hooks* h = s.evaluation()) {
        return h->show_stop(r);
    }
    return r.for_user();
}

std::string abandoned_text(const std::string& name, bool silent_stop) {
    std::string text = "Evaluation of the expression containing the function\n(" + name + ") will be abandoned.";
    if (silent_stop) {
        text += "\nWhen the function is done executing, GDB will silently stop.";
    }
    return text;
}

// The dummy frame: the sret buffer, the stack arguments, the return address; the
// argument registers and AL. Returns the sret address (0: none) and the sp at entry.
std::pair<std::uint64_t, std::uint64_t> build_frame(tracer::process& p, tracer::registers& regs,
                                                    const dwarf::function_call& call, std::uint64_t top,
                                                    std::uint64_t return_to) {
    std::uint64_t sp = top;
    std::optional<std::uint64_t> sret;
    if (dwarf::returned_in_memory(call.return_type)) {
        sp = (sp - call.return_type.size()) & ~std::uint64_t{15};
        sret = sp;
    }
    dwarf::call_layout layout = dwarf::lay_out_call(call.args, sret);
    // The psABI: (rsp + 8) is 16-byte aligned at the callee's first instruction.
    std::uint64_t args_at = (sp - layout.stack.size()) & ~std::uint64_t{15};
    if (!layout.stack.empty()) {
        p.write_memory(virt_addr(args_at), layout.stack);
    }
    std::uint64_t entry_sp = args_at - 8;
    std::byte ret[8];
    std::memcpy(ret, &return_to, 8);
    p.write_memory(virt_addr(entry_sp), ret);

    auto& gp = regs.gp();
    unsigned long long* int_regs[] = {&gp.rdi, &gp.rsi, &gp.rdx, &gp.rcx, &gp.r8, &gp.r9};
    for (std::size_t i = 0; i < layout.int_regs.size() && i < 6; ++i) {
        *int_regs[i] = layout.int_regs[i];
    }
    for (std::size_t i = 0; i < layout.sse_regs.size() && i < 8; ++i) {
        std::memcpy(regs.fp_regs().xmm_space + i * 4, layout.sse_regs[i].data(), 16);
    }
    gp.rax = static_cast<unsigned long long>(layout.sse_count());
    gp.rsp = entry_sp;
    gp.rip = call.address;
    // Not in a system call any more: the kernel must not restart one at the new pc.
    gp.orig_rax = ~0ULL;
    return {sret.value_or(0), entry_sp};
}

dwarf::value read_result(tracer::process& p, const tracer::registers& regs, const dwarf::type& t,
                         std::uint64_t sret) {
    dwarf::value v;
    if (t.is_void()) {
        return v;
    }
    v.val_type = t;
    std::uint64_t size = t.strip_cv_typedef().size();
    if (sret != 0) {
        v.bytes.resize(size);
        p.read_memory(virt_addr(sret), v.bytes);
        return v;
    }
    dwarf::return_registers r;
    r.rax = regs.gp().rax;
    r.rdx = regs.gp().rdx;
    std::memcpy(r.xmm0.data(), regs.fp_regs().xmm_space, 16);
    std::memcpy(r.xmm1.data(), regs.fp_regs().xmm_space + 4, 16);
    if (auto bytes = dwarf::returned_bytes(t, r)) {
        v.bytes = std::move(*bytes);
        return v;
    }
    auto st = t.strip_cv_typedef();
    if (st.kind() == dwarf::type_kind::base && st.encoding() == dwarf::base_encoding::floating) {
        // long double: st(0), 10 bytes of x87 extended precision.
        v.bytes.assign(size, std::byte{0});
        std::memcpy(v.bytes.data(), regs.fp_regs().st_space, std::min<std::uint64_t>(size, 10));
        return v;
    }
    error::send("Cannot read a returned value of type " + t.name() + ".");
}

}  // namespace

std::uint64_t push_scratch(session& s, pid_t tid, std::span<const std::byte> bytes,
                           std::optional<std::uint64_t> below) {
    tracer::process& p = require_callable(s);
    std::uint64_t top = below ? *below : require_thread(p, tid).regs().sp() - red_zone;
    std::uint64_t at = (top - bytes.size()) & ~std::uint64_t{15};
    p.write_memory(virt_addr(at), bytes);
    return at;
}

dwarf::value call_function(session& s, pid_t tid, const dwarf::function_call& call,
                           std::optional<std::uint64_t> stack_top) {
    tracer::process& p = require_callable(s);
    std::uint64_t return_to = entry_point(p);
    caller_state saved(s, p, tid);
    tracer::registers regs = saved.regs();
    std::uint64_t top = stack_top ? *stack_top : regs.sp() - red_zone;
    auto [sret, entry_sp] = build_frame(p, regs, call, top, return_to);
    return_breakpoint ret_bp(s, p, return_to);
    require_thread(p, tid).write_regs(regs);
    p.set_step_over_pc(tid, std::nullopt);
    held_threads hold(s, p, tid);
    while (true) {
        tracer::stop_reason why = resume_and_wait(s);
        if (why.kind == tracer::stop_kind::breakpoint && why.tid == tid && why.breakpoint_addr &&
            why.breakpoint_addr->addr() == return_to) {
            tracer::thread& t = require_thread(p, tid);
            if (t.regs().sp() == entry_sp + 8) {
                dwarf::value v = read_result(p, t.regs(), call.return_type, sret);
                return v;   // `saved` puts the caller's registers back
            }
        }
        if (why.is_process_end()) {
            saved.keep();
            ret_bp.release();
            show_stop(s, why);
            error::send("The program being debugged exited while in a function called from GDB.\n" +
                        abandoned_text(call.name, false));
        }
        if (why.kind == tracer::stop_kind::signal || why.kind == tracer::stop_kind::interrupted) {
            show_stop(s, why);
            if (s.settings().unwind_on_signal) {
                saved.restore();
                error::send("The program being debugged was signaled while in a function called from GDB.\n"
                            "GDB has restored the context to what it was before the call.\n"
                            "To change this behavior use \"set unwindonsignal off\".\n" +
                            abandoned_text(call.name, false));
            }
            saved.keep();
            ret_bp.release();
            remember_abandoned(s, p, tid, entry_sp + 8, return_to, saved.regs(), saved.step_over());
            error::send("The program being debugged was signaled while in a function called from GDB.\n"
                        "GDB remains in the frame where the signal was received.\n"
                        "To change this behavior use \"set unwindonsignal on\".\n" +
                        abandoned_text(call.name, true));
        }
        if (!show_stop(s, why)) {
            continue;   // not for the user: a false condition, our return site hit deeper
        }
        saved.keep();
        ret_bp.release();
        remember_abandoned(s, p, tid, entry_sp + 8, return_to, saved.regs(), saved.step_over());
        error::send("The program being debugged stopped while in a function called from GDB.\n" +
                    abandoned_text(call.name, true));
    }
}

}  // namespace ompdbg::debugger::infcall
