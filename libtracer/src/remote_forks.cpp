// Forks, vforks and execs of a remote process. The agent reports them (fork-events+,
// vfork-events+, exec-events+ in qSupported) as stop replies `T05fork:pC.C;...`,
// `vfork:pC.C`, `vforkdone:` and `exec:HEXPATH`, and holds a fork child stopped, with the
// parent's breakpoints in its copy of the memory, until the debugger lets it go. Here they
// become the stop_reasons a local process gives (process_forks.cpp), as gdb's remote.c and
// infrun.c handle them: the child's copies of our breakpoints removed (z0 with the child
// selected: the agent cloned the parent's breakpoints into it) and the child detached
// (D;PID), or kept, held by the agent, for adopt_fork_child (follow-fork-mode child,
// detach-on-fork off); a vfork child shares the parent's memory, so the breakpoints leave
// the parent until its vforkdone; an exec drops the old image's breakpoints (the agent
// forgot them).
#include "ompdbg/tracer/remote_process.hpp"

#include <algorithm>
#include <span>
#include <utility>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

std::optional<stop_reason> remote_process::process_event(const rsp::stop_reply& r, stop_reason why, bool asked) {
    if (!r.is_process_event()) {
        return std::nullopt;
    }
    why.signo = 0;
    if (auto exec = r.fields.find("exec"); exec != r.fields.end()) {
        try {
            exe_ = rsp::from_hex(exec->second);
        } catch (const error& e) {
            log::write(log::channel::ptrace, "process {}: exec stop with a malformed path: {}", pid_, e.what());
        }
        restore_vfork_parent_memory();
        // A new image: the old one's breakpoints, watchpoints and threads are gone, in the
        // agent as here (it mourns the old process and makes a new one of the same pid).
        sites_.clear();
        watches_.clear();
        soft_watches_.clear();
        soft_stepping_ = false;
        soft_step_sent_ = false;
        soft_hit_.reset();
        vfork_lifted_ = false;
        auxv_.reset();
        notes_.clear();
        threads_known_ = false;   // the next list has the execing thread alone
        pending_signals_.clear();
        reported_pcs_.clear();
        why.kind = stop_kind::exec;
        why.tid = pid_;   // the execing thread took the leader's id
        soft_tid_ = pid_;
        return why;
    }
    if (r.fields.count("vforkdone") > 0) {
        // The vfork child exec'ed or exited: the memory is the parent's alone again.
        if (vfork_lifted_) {
            vfork_lifted_ = false;
            for (auto& [addr, s] : sites_) {
                if (s->enabled_) {
                    rsp().insert_breakpoint(pid_, addr);
                }
            }
        }
        why.kind = stop_kind::interrupted;
        restart_ = !asked;   // never reported, as locally (an interrupt asked meanwhile is)
        return why;
    }
    const bool is_vfork = r.fields.count("fork") == 0;
    const std::string& id = r.fields.at(is_vfork ? "vfork" : "fork");
    pid_t child = 0;
    try {
        auto [p, t] = rsp::parse_thread_id(id);
        child = p > 0 ? p : t;
    } catch (const error& e) {
        log::write(log::channel::ptrace, "process {}: fork stop with a malformed child: {}", pid_, e.what());
    }
    if (child <= 0) {
        why.kind = stop_kind::interrupted;
        restart_ = !asked;
        return why;
    }
    const bool keep = is_vfork ? keep_vfork_children_ : keep_children_;
    if (is_vfork) {
        // The child runs in our memory until it execs or exits: our breakpoints leave it
        // (through the parent, whose z0 restores the shared bytes) until vforkdone.
        if (!vfork_lifted_) {
            for (auto& [addr, s] : sites_) {
                if (s->enabled_) {
                    rsp().remove_breakpoint(pid_, addr);
                }
            }
            vfork_lifted_ = true;
        }
        if (keep) {
            // The agent's copy of our breakpoints in the child (already out of the shared
            // memory) must go, or the child's own would be taken for planted.
            for (auto& [addr, s] : sites_) {
                if (s->enabled_) {
                    try {
                        rsp().remove_breakpoint(child, addr);
                    } catch (const error&) {
                        // Not cloned into the child: nothing of ours there to forget.
                    }
                }
            }
        }
    } else {
        // The child's copy of the memory has our int3s: the agent cloned our breakpoints
        // into the child, and its z0 there puts the original bytes back. Were they not
        // cloned, the saved byte is written instead.
        for (auto& [addr, s] : sites_) {
            if (!s->enabled_) {
                continue;
            }
            try {
                rsp().remove_breakpoint(child, addr);
            } catch (const error&) {
                const std::byte saved = s->saved_;
                rsp().write_memory(child, addr, std::span<const std::byte>(&saved, 1));
            }
        }
    }
    why.kind = stop_kind::fork;
    why.new_tid = child;
    why.is_vfork = is_vfork;
    if (keep) {
        // Held by the agent for adopt_fork_child; always reported, as locally.
        kept_children_.push_back(child);
        return why;
    }
    released_children_.push_back(child);
    if (!report_forks_) {
        // Not reported (no catch fork, no announcement): the child goes at once, and the
        // process runs on unless an interrupt was asked meanwhile.
        release_children();
        if (!asked) {
            restart_ = true;
        } else {
            why.kind = stop_kind::interrupted;
        }
    }
    return why;
}

std::unique_ptr<process> remote_process::adopt_fork_child(pid_t child, bool vforked) {
    auto it = std::find(kept_children_.begin(), kept_children_.end(), child);
    if (it == kept_children_.end()) {
        error::send(fmt::format("process {} is not a fork child held for process {}.", child, pid_));
    }
    kept_children_.erase(it);
    std::unique_ptr<remote_process> p(new remote_process(conn_, child, elves_));
    p->exe_ = exe_;   // the same image until it execs
    p->vfork_parent_ = vforked ? pid_ : 0;
    p->report_forks_ = report_forks_;
    return p;
}

void remote_process::release_fork_child(pid_t child) {
    auto it = std::find(kept_children_.begin(), kept_children_.end(), child);
    if (it == kept_children_.end()) {
        return;   // not kept (or let go already): nothing held for us
    }
    kept_children_.erase(it);
    released_children_.push_back(child);
}

void remote_process::restore_vfork_parent_memory() {
    const pid_t parent = std::exchange(vfork_parent_, 0);
    if (parent == 0) {
        return;
    }
    for (auto& [addr, s] : sites_) {
        if (!s->enabled_) {
            continue;
        }
        try {
            const std::byte saved = s->saved_;
            rsp().write_memory(parent, addr, std::span<const std::byte>(&saved, 1));
        } catch (const error& e) {
            log::write(log::channel::ptrace, "vfork parent {}: restoring {:#x}: {}", parent, addr, e.what());
        }
    }
}

void remote_process::release_children() {
    for (pid_t child : kept_children_) {
        released_children_.push_back(child);   // never adopted (a step ran meanwhile)
    }
    kept_children_.clear();
    for (pid_t child : std::exchange(released_children_, {})) {
        try {
            rsp().detach(child);
        } catch (const error& e) {
            // The child is gone already (killed on its host): nothing to let go.
            log::write(log::channel::ptrace, "letting fork child {} of {} go: {}", child, pid_, e.what());
        }
    }
}

void remote_process::restart() {
    if (stepping_tid_ != 0) {
        forget_after_resume();
        conn_->request_resume(pid_, {{'s', 0, pid_, stepping_tid_}});
        running_ = true;
        return;
    }
    resume_now();
}

}  // namespace ompdbg::tracer
