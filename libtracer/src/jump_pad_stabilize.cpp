// Threads stopped inside a jump pad (issue 21). An interrupt or another thread's stop stops
// a thread wherever it is, and a thread of a hot loop with a fast breakpoint is often in the
// pad or in the agent the pad calls: its registers are the pad's and its stack has the
// pad's register block on it, so `bt` would show the pad's addresses. Before a stop is
// reported each such thread is put where the program's own code would be (gdbserver
// "stabilizes" threads out of its fast tracepoint pads the same way):
//   - in the relocated instructions: stepped through them, to after the displaced bytes
//     (or wherever a relocated jump takes it);
//   - in the native condition, saving registers, in the agent, restoring registers: it
//     runs on alone (a temporary int3 on the relocated instructions, the pad's own trap on
//     the stop path) to where its registers are the site's again. Let go (by the native
//     code or the agent), it is stepped through the relocated instructions as above: its
//     hit may have been counted (or ignored), so it must not pass the site again. Sent to
//     the stop path, it is put back at the site: resumed, it evaluates the condition again
//     (the stop path changed no counter) and stops if it holds.

#include "internal/jump_pad.hpp"
#include "internal/process_impl.hpp"
#include "internal/ptrace_wrapper.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/tracer/proc_fs.hpp"

#include <algorithm>
#include <array>
#include <csignal>

#include <sys/ptrace.h>
#include <sys/wait.h>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

namespace {

bool inside(const internal::jump_pad& pad, std::uint64_t pc) {
    return pc >= pad.base && pc < pad.base + pad.code.size();
}

bool in_relocated(const internal::jump_pad& pad, std::uint64_t pc) {
    return pc >= pad.relocated && pc <= pad.relocated + pad.moved.code.size();
}

}  // namespace

// One instruction of `t` alone; a signal that comes instead is kept for the next resume.
bool ptrace_process::impl::single_step_alone(thread_record& t) {
    for (int tries = 0; tries < 8; ++tries) {
        t.forget_regs();
        if (!try_ptrace(PTRACE_SINGLESTEP, t.tid_, nullptr, nullptr)) {
            return false;
        }
        int status = 0;
        if (internal::wait_tid(t.tid_, &status, __WALL) != t.tid_) {
            return false;
        }
        if (!WIFSTOPPED(status)) {
            handle_status(t, wait_status(status));   // it died: the exit is recorded
            return false;
        }
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP || (status >> 16) != 0) {
            return true;
        }
        if (sig != SIGSTOP) {
            t.pending_signal = sig;
        }
    }
    return false;
}

// A thread in the relocated instructions has the program's registers: it finishes the
// displaced instructions one step at a time (a thread stepping over the site is here too,
// and must not evaluate the condition again). The bytes at the site are our jump, so no
// other address there stands for where it is.
void ptrace_process::impl::finish_relocated(thread_record& t, const internal::jump_pad& pad, std::uint64_t pc) {
    for (int steps = 0; steps < 32 && in_relocated(pad, pc); ++steps) {
        if (pc == pad.relocated + pad.moved.code.size()) {
            write_pc(t.tid_, pad.site + pad.moved.covered);   // the jump back
            break;
        }
        if (!single_step_alone(t)) {
            break;
        }
        pc = read_pc(t.tid_);
    }
    t.forget_regs();
}

void ptrace_process::impl::normalise_pads() {
    if (pads.empty() && retired_pads.empty()) {
        return;
    }
    std::vector<const internal::jump_pad*> all;
    for (auto& [site, p] : pads) {
        all.push_back(&p.pad);
    }
    for (auto& r : retired_pads) {
        all.push_back(&r);
    }
    if (!agent_code) {
        for (const auto& m : proc_fs::read_maps(pid)) {
            if (all.front()->evaluate >= m.start && all.front()->evaluate < m.end) {
                agent_code = std::pair{m.start, m.end};
            }
        }
    }
    const bool all_stopped = std::none_of(threads.begin(), threads.end(), [](const auto& o) {
        return o->st == tstate::running || o->st == tstate::stopping || o->st == tstate::listening;
    });
    for (auto& tp : threads) {
        thread_record& t = *tp;
        if (t.st != tstate::stopped) {
            continue;   // an early report: the others still run
        }
        std::uint64_t pc = 0;
        try {
            pc = read_pc(t.tid_);
        } catch (const error&) {
            continue;
        }
        const internal::jump_pad* pad = nullptr;
        for (const auto* p : all) {
            if (inside(*p, pc)) {
                pad = p;
            }
        }
        if (pad == nullptr && agent_code && pc >= agent_code->first && pc < agent_code->second) {
            // In the agent: the pad it was called from is the one whose return address is
            // on the stack (the agent's frames are small; live frames only, above rsp).
            std::array<std::uint64_t, 512> words{};
            std::uint64_t sp = t.regs().sp();
            std::size_t got = raw_read(sp, std::as_writable_bytes(std::span(words))) / 8;
            for (std::size_t i = 0; i < got && pad == nullptr; ++i) {
                for (const auto* p : all) {
                    if (words[i] == p->after_call) {
                        pad = p;
                    }
                }
            }
        }
        if (pad == nullptr) {
            continue;
        }
        if (in_relocated(*pad, pc)) {
            finish_relocated(t, *pad, pc);
            continue;
        }
        // Saving or restoring registers, or in the agent: on alone to the relocated
        // instructions or to the stop path's trap, where the registers are the site's. The
        // temporary int3 is in code every thread runs: only with all of them stopped.
        if (!all_stopped) {
            continue;
        }
        std::array<std::byte, 1> saved{};
        if (raw_read(pad->relocated, saved) != 1) {
            continue;
        }
        const std::array<std::byte, 1> int3{std::byte{0xcc}};
        raw_write(pad->relocated, int3);
        bool placed = false;
        bool let_go = false;   // the agent let it go on: at the relocated instructions
        for (int stops = 0; stops < 64 && !placed; ++stops) {
            t.forget_regs();
            if (!try_ptrace(PTRACE_CONT, t.tid_, nullptr, nullptr)) {
                break;
            }
            int status = 0;
            if (internal::wait_tid(t.tid_, &status, __WALL) != t.tid_) {
                break;
            }
            if (!WIFSTOPPED(status)) {
                handle_status(t, wait_status(status));   // it died: the exit is recorded
                break;
            }
            int sig = WSTOPSIG(status);
            std::uint64_t at = read_pc(t.tid_);
            if (sig == SIGTRAP && (status >> 16) == 0 && at - 1 == pad->relocated) {
                write_pc(t.tid_, pad->relocated);
                let_go = true;
                placed = true;
            } else if (sig == SIGTRAP && (status >> 16) == 0 && at - 1 == pad->trap) {
                write_pc(t.tid_, pad->site);
                placed = true;
            } else if ((status >> 16) == 0 && sig != SIGTRAP && sig != SIGSTOP) {
                t.pending_signal = sig;   // delivered when the program resumes
            }
        }
        raw_write(pad->relocated, saved);
        t.forget_regs();
        if (let_go) {
            finish_relocated(t, *pad, pad->relocated);
        }
        if (!placed) {
            log::write(log::channel::ptrace, "thread {}: could not leave the pad of {:#x}", t.tid_, pad->site);
        }
    }
}

}  // namespace ompdbg::tracer
