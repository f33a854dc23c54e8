#pragma once
/// What run control keeps for one session (run_control.cpp, fork_follow.cpp): the fork
/// children waiting to be followed or announced, and whether forks are followed now.

#include <sys/types.h>

#include <optional>

#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger::run_detail {

/// A fork reported at a stop, to be acted on at the next resume: `pid` is the parent.
struct pending_fork {
    pid_t pid = 0;
    tracer::stop_reason why;
};

struct run_state {
    /// A fork child kept for follow-fork-mode child / detach-on-fork off that `catch fork`
    /// reported first.
    std::optional<pending_fork> fork_to_follow;
    /// Set by follow_forks_scope (`continue`, `run`): the other commands let children go.
    bool follow_forks = false;
    /// A fork caught by `catch fork` whose child is let go: reported on the next resume
    /// (a new process after `run` or `kill` does not report it).
    std::optional<pending_fork> release_to_announce;
};

inline run_state& state_of(session& s) {
    return s.model_state().get<run_state>();
}

}  // namespace ompdbg::debugger::run_detail
