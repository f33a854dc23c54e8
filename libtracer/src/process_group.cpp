// Waiting for several traced processes at once. Every member keeps its own all-stop
// protocol (process_events.cpp); the group only decides whom to poll and when to sleep:
// one drain of the shared SIGCHLD self-pipe, one non-blocking poll of every running member,
// then one sleep, so a wake-up for any member is never lost between two members' polls.

#include "ompdbg/tracer/process_group.hpp"

#include "internal/process_impl.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"

#include <algorithm>
#include <chrono>

namespace ompdbg::tracer {

namespace {

// The group polls its members' ptrace state without draining the shared wake-up pipe:
// only processes traced here can be members (a remote process waits on its agent).
ptrace_process& traced(const process& p) {
    auto* t = dynamic_cast<const ptrace_process*>(&p);
    if (!t) {
        error::send("Waiting for several processes at once is not supported yet for processes on other hosts.");
    }
    return const_cast<ptrace_process&>(*t);
}

}  // namespace

void process_group::add(process& p) {
    traced(p);
    if (std::find(members_.begin(), members_.end(), &p) == members_.end()) {
        members_.push_back(&p);
    }
}

void process_group::remove(const process& p) {
    std::erase(members_, &p);
}

bool process_group::is_running(const process& p) {
    auto& t = traced(p);
    return t.impl_->alive && t.impl_->running;
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
        bool activity = false;
        internal::wakeup_drain();
        for (auto* p : members_) {
            if (!is_running(*p)) {
                continue;
            }
            any_running = true;
            if (auto r = traced(*p).impl_->poll_report(activity)) {
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
                if (is_running(*p)) {
                    traced(*p).impl_->adopt_unknown_tasks();
                }
            }
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
            auto why = p->wait_for_stop();
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

}  // namespace ompdbg::tracer
