// Inferiors after a fork (gdb's follow-fork-mode / detach-on-fork). The session keeps one
// inferior per process; gdb numbers them from 1 in the order they appeared, which is their
// index here plus one.
#include "ompdbg/debugger/run/fork_follow.hpp"

#include <memory>
#include <string>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "run/run_state.hpp"

namespace ompdbg::debugger {

bool inferiors_are_ranks(session& s) {
    for (auto& inf : s.inferiors()) {
        if (inf->rank >= 0) {
            return true;
        }
    }
    return s.job() != nullptr;
}

std::optional<std::size_t> inferior_of_pid(session& s, pid_t pid) {
    auto& list = s.inferiors();
    for (std::size_t i = 0; pid != 0 && i < list.size(); ++i) {
        if (list[i]->pid == pid || (list[i]->process && list[i]->process->pid() == pid)) {
            return i;
        }
    }
    return std::nullopt;
}

void detach_inferior(session& s, std::size_t index) {
    auto& inf = *s.inferiors()[index];
    if (!inf.process) {
        return;
    }
    const pid_t pid = inf.process->pid();
    try {
        inf.process->detach();
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "detaching process {}: {}", pid, e.what());
    }
    inf.forget_process();
    s.observer().inferior_detached(static_cast<int>(index + 1), pid);
}

bool keeps_fork_children(session& s) {
    const auto& ev = s.process_events();
    return !inferiors_are_ranks(s) && (ev.follow_child || !ev.detach_on_fork);
}

bool keeps_vfork_children(session& s) {
    return keeps_fork_children(s) && s.process_events().follow_child;
}

void vfork_child_done(session& s, std::string_view how) {
    auto& child = s.current_inferior();
    auto parent = inferior_of_pid(s, child.vfork_parent_pid);
    child.vfork_parent_pid = 0;
    if (!parent) {
        return;
    }
    auto& parent_inf = *s.inferiors()[*parent];
    parent_inf.vfork_child_pid = 0;
    if (!parent_inf.process || !parent_inf.process->is_alive()) {
        return;
    }
    try {
        parent_inf.process->finish_vfork();   // its breakpoints and guards are back
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "finishing the vfork of {}: {}", parent_inf.process->pid(), e.what());
    }
    if (!parent_inf.detach_after_vfork || !parent_inf.process->is_alive()) {
        return;
    }
    parent_inf.detach_after_vfork = false;
    s.observer().vfork_parent_detached(parent_inf.process->pid(), how);
    detach_inferior(s, *parent);
}

void check_vfork_parent_resumable(session& s) {
    auto child = inferior_of_pid(s, s.current_inferior().vfork_child_pid);
    if (child && s.inferiors()[*child]->process && s.inferiors()[*child]->process->is_alive()) {
        error::send("Can not resume the parent process over vfork in the foreground while\n"
                    "holding the child stopped.  Try \"set detach-on-fork\" or \"set schedule-multiple\".");
    }
}

bool announces_forks(session& s) {
    return !inferiors_are_ranks(s);
}

void announce_released_child(session& s, const tracer::stop_reason& why) {
    s.observer().fork_child_released(why.new_tid, why.is_vfork);
}

bool qualified_thread_numbers(session& s) {
    return s.inferiors().size() > 1 && !inferiors_are_ranks(s);
}

int current_inferior_number(session& s) {
    auto& list = s.inferiors();
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].get() == &s.current_inferior()) {
            return static_cast<int>(i + 1);
        }
    }
    return 1;
}

namespace {

/// The watchpoints go with the followed child (the thread that forked is `parent_tid`);
/// the ones that cannot be armed there are reported, as gdb does.
void move_watchpoints_reporting(session& s, pid_t parent_tid) {
    for (const auto& d : move_watchpoints_to_child(s, parent_tid)) {
        if (!d.error.empty()) {
            s.observer().watchpoint_dropped(d.number, d.error);
        }
    }
}

}  // namespace

void follow_fork(session& s, const tracer::stop_reason& why) {
    const auto& ev = s.process_events();
    const std::size_t parent_index = static_cast<std::size_t>(current_inferior_number(s) - 1);
    tracer::process* parent = s.process();
    if (parent == nullptr || why.new_tid <= 0) {
        return;
    }
    const pid_t parent_pid = parent->pid();
    const std::string parent_thread = s.thread_target_id(why.tid);
    std::unique_ptr<tracer::process> child;
    try {
        child = parent->adopt_fork_child(why.new_tid, why.is_vfork);
    } catch (const std::exception& e) {
        s.observer().error(fmt::format("Cannot debug fork child {}: {}", why.new_tid, e.what()));
        return;
    }
    auto inf = std::make_unique<inferior>();
    inf->process = std::move(child);
    inf->pid = why.new_tid;
    s.inferiors().push_back(std::move(inf));
    const std::size_t child_index = s.inferiors().size() - 1;
    const int child_number = static_cast<int>(child_index + 1);
    if (ev.follow_child) {
        s.observer().fork_followed(parent_pid, parent_thread, why.new_tid, why.is_vfork);
    }
    s.observer().inferior_added(child_number, why.new_tid);

    // The child gets every breakpoint (its memory had ours taken out when it was kept).
    s.switch_to(child_index);
    s.refresh_thread_numbers();
    try {
        refresh_breakpoints(s, false);
    } catch (const std::exception& e) {
        s.observer().error(e.what());
    }
    if (!ev.follow_child) {
        s.switch_to(parent_index);
        return;   // detach-on-fork off: the child waits, stopped, as inferior 2
    }
    s.current_inferior().selected_tid = 0;   // the first stop there says "[Switching to ...]"
    if (why.is_vfork) {
        // As gdb (infrun.c, follow_fork_inferior): the parent, suspended in vfork() by the
        // kernel anyway, is held until the child execs or exits (vfork_child_done), then
        // detached with detach-on-fork. The watchpoints go with the child then, as for a
        // fork (it guards the memory it shares; the parent's guards come back at its
        // VFORK_DONE, before it is detached, which takes them out).
        auto& parent_inf = *s.inferiors()[parent_index];
        parent_inf.vfork_child_pid = why.new_tid;
        parent_inf.detach_after_vfork = ev.detach_on_fork;
        s.current_inferior().vfork_parent_pid = parent_pid;
        if (ev.detach_on_fork) {
            move_watchpoints_reporting(s, why.tid);
        }
        return;
    }
    if (ev.detach_on_fork) {
        s.observer().fork_parent_detached(parent_pid);
        detach_inferior(s, parent_index);
        // The watchpoints go with the program the user follows.
        move_watchpoints_reporting(s, why.tid);
    }
}

}  // namespace ompdbg::debugger
