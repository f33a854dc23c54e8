// Waiting for several traced processes at once. Every member keeps its own all-stop
// protocol (process_events.cpp); the group only decides whom to poll and when to sleep:
// one drain of the shared SIGCHLD self-pipe, one non-blocking poll of every running member,
// then one sleep, so a wake-up for any member is never lost between two members' polls.

#include "ompdbg/tracer/process_group.hpp"

#include "internal/process_impl.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/remote_process.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace ompdbg::tracer {

namespace {

// The group polls its traced members' ptrace state without draining the shared wake-up
// pipe, and its remote members (processes of other hosts) through their agents.
ptrace_process* traced(const process& p) {
    return const_cast<ptrace_process*>(dynamic_cast<const ptrace_process*>(&p));
}

remote_process* remote(const process& p) {
    return const_cast<remote_process*>(dynamic_cast<const remote_process*>(&p));
}

/// A remote member whose agent is gone: reported as lost, so that the others go on.
process_group::event lost(process* p, const std::exception& e) {
    stop_reason why;
    why.kind = stop_kind::terminated;
    why.tid = p->pid();
    why.connection_lost = true;
    why.lost_reason = e.what();
    return process_group::event{p, why};
}

/// How long a remote member's stop may take after an interrupt.
constexpr int remote_stop_timeout_ms = 20000;
/// While remote members run, the group also polls their agents this often: their replies
/// arrive on pipes or sockets, which do not write to the SIGCHLD wake-up pipe.
constexpr int remote_poll_ms = 10;

}  // namespace

void process_group::add(process& p) {
    if (!traced(p) && !remote(p)) {
        error::send("This kind of process cannot be waited for with others.");
    }
    if (std::find(members_.begin(), members_.end(), &p) == members_.end()) {
        members_.push_back(&p);
    }
}

void process_group::remove(const process& p) {
    std::erase(members_, &p);
}

bool process_group::is_running(const process& p) {
    if (auto* r = remote(p)) {
        return r->is_alive() && r->is_running();
    }
    auto* t = traced(p);
    return t && t->impl_->alive && t->impl_->running;
}

void process_group::resume_all() {
    for (auto* p : members_) {
        if (p->is_alive() && !is_running(*p)) {
            p->resume();
        }
    }
}

std::optional<process_group::event> process_group::wait_any(int timeout_ms) {
    internal::wakeup_init();
    auto start = std::chrono::steady_clock::now();
    bool woke = false;
    for (;;) {
        bool any_running = false;
        bool any_remote = false;
        bool activity = false;
        internal::wakeup_drain();
        for (auto* p : members_) {
            if (!is_running(*p)) {
                continue;
            }
            any_running = true;
            if (remote(*p)) {
                any_remote = true;
                try {
                    if (auto r = p->wait_for_stop(0)) {
                        return event{p, *r};
                    }
                } catch (const std::exception& e) {
                    return lost(p, e);
                }
                continue;
            }
            if (auto r = traced(*p)->impl_->poll_report(activity)) {
                return event{p, *r};
            }
        }
        if (!any_running) {
            error::send("The program is not running.");
        }
        if (activity) {
            continue;   // something was handled internally: poll again before sleeping
        }
        int wait_ms = -1;
        if (timeout_ms >= 0) {
            auto spent =
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
            if (spent >= timeout_ms) {
                return std::nullopt;
            }
            wait_ms = static_cast<int>(timeout_ms - spent);
        }
        if (woke) {
            // A wake-up with nothing to collect may be the exit of a clone whose event we
            // never saw: adopt such tasks so that their exits are reaped.
            for (auto* p : members_) {
                if (is_running(*p) && traced(*p)) {
                    traced(*p)->impl_->adopt_unknown_tasks();
                }
            }
        }
        if (any_remote && (wait_ms < 0 || wait_ms > remote_poll_ms)) {
            wait_ms = remote_poll_ms;
        }
        woke = internal::wakeup_wait(wait_ms);
    }
}

std::vector<process_group::event> process_group::stop_all() {
    std::vector<event> kept;
    for (auto* p : members_) {
        if (is_running(*p)) {
            p->interrupt();
        }
    }
    for (auto* p : members_) {
        while (is_running(*p)) {
            stop_reason why;
            if (remote(*p)) {
                try {
                    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(remote_stop_timeout_ms);
                    std::optional<stop_reason> w;
                    while (!w && std::chrono::steady_clock::now() < until) {
                        w = p->wait_for_stop(500);   // nullopt also when another process of its agent reported
                    }
                    if (!w) {
                        error::send(fmt::format("Process {} did not stop within {} s.", p->pid(),
                                                remote_stop_timeout_ms / 1000));
                    }
                    why = *w;
                } catch (const std::exception& e) {
                    kept.push_back(lost(p, e));
                    break;
                }
            } else {
                why = p->wait_for_stop();
            }
            if (why.kind != stop_kind::interrupted) {
                kept.push_back(event{p, why});
            }
            if (is_running(*p)) {
                // A background event (library load) resumed it internally: ask again.
                p->interrupt();
            }
        }
    }
    return kept;
}

void process_group::interrupt() {
    for (auto* p : members_) {
        p->interrupt();
    }
}

bool process_group::start_step(process& p, pid_t tid) {
    auto* t = traced(p);
    if (t == nullptr) {
        return false;
    }
    auto& d = *t->impl_;
    int sig = 0;
    thread_record& thr = d.prepare_step(tid, sig);
    d.start_reported_step(thr, sig);
    return true;
}

}  // namespace ompdbg::tracer
