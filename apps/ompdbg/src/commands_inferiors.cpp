// Inferiors after a fork (gdb's follow-fork-mode / detach-on-fork), `info inferiors` and
// `inferior [N]`. The session keeps one inferior per process; gdb numbers them from 1 in
// the order they appeared, which is their index here plus one.
#include "commands_inferiors.hpp"

#include <optional>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "command_args.hpp"
#include "commands_watch.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

/// gdb's prefix of a file read through the remote target (its sysroot "target:").
constexpr const char* remote_prefix = "target:";

/// The program of the session read from its host through the agent, as gdb names it.
struct remote_program_state {
    std::string name;
};

bool is_job(session& s) {
    for (auto& inf : s.inferiors()) {
        if (inf->rank >= 0) {
            return true;
        }
    }
    return s.job() != nullptr;
}

/// "process 1234" or "<null>", as gdb's Description column and switch messages.
std::string description(const inferior& inf) {
    if (inf.process && inf.process->is_alive()) {
        return fmt::format("process {}", inf.process->pid());
    }
    return "<null>";
}

std::string executable_of(session& s, const inferior& inf) {
    // A program read from its host through the agent (no file of it here): gdb names it
    // "target:PATH", while the process is debugged and after it is detached (a detach
    // makes a new inferior: the session keeps the name).
    if (auto& remote = remote_program(s); !remote.empty() && !is_job(s) && &inf == s.inferiors().front().get()) {
        return remote;
    }
    if (inf.process && inf.process->is_alive()) {
        return inf.process->executable().string();
    }
    return s.program() ? std::filesystem::absolute(*s.program()).string() : std::string();
}

// gdb's table: a field is padded to its column width, then one space.
std::string cell(std::string_view text, std::size_t width) {
    std::string out(text);
    if (out.size() < width) {
        out.append(width - out.size(), ' ');
    }
    return out + " ";
}

// gdb deletes an inferior a fork added once its process is gone and it is not current.
// Only trailing ones go here: the others keep their number (their index plus one).
void prune_inferiors(session& s) {
    auto& list = s.inferiors();
    while (list.size() > 1 && !is_job(s) && list.back().get() != &s.current_inferior() &&
           !(list.back()->process && list.back()->process->is_alive())) {
        list.pop_back();
    }
}

/// The index of the inferior of process `pid` (kept after it ended), if it is listed.
std::optional<std::size_t> inferior_of_pid(session& s, pid_t pid) {
    auto& list = s.inferiors();
    for (std::size_t i = 0; pid != 0 && i < list.size(); ++i) {
        if (list[i]->pid == pid || (list[i]->process && list[i]->process->pid() == pid)) {
            return i;
        }
    }
    return std::nullopt;
}

/// Detaches the process of inferior `index` (not the current one) and forgets its state,
/// with gdb's "[Inferior N (process P) detached]".
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
    inf.model_state.clear();
    inf.process.reset();
    inf.stacks.clear();
    inf.thread_db.reset();
    inf.thread_db_tried = false;
    inf.pending_hits.clear();
    inf.planted.clear();
    s.out().event("detached", {{"pid", pid}}, fmt::format("[Inferior {} (process {}) detached]", index + 1, pid));
}

void cmd_info_inferiors(session& s, std::string_view) {
    prune_inferiors(s);
    auto& list = s.inferiors();
    const std::size_t current = static_cast<std::size_t>(current_inferior_number(s) - 1);
    // gdb's Connection column: "1 (native)", "1 (extended-remote | CMD)", as wide as its
    // widest entry (at least 20).
    auto connection_of = [&](const inferior& inf) -> std::string {
        if (inf.process && inf.process->is_alive()) {
            return fmt::format("1 ({})", inf.process->connection());
        }
        return s.remote() ? fmt::format("1 ({})", s.remote()->describe()) : std::string();
    };
    std::size_t connection_width = 20;
    for (auto& inf : list) {
        connection_width = std::max(connection_width, connection_of(*inf).size());
    }
    s.out().line(cell("", 1) + cell("Num", 4) + cell("Description", 17) + cell("Connection", connection_width) +
                 cell("Executable", 17));
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& inf = *list[i];
        bool live = inf.process && inf.process->is_alive();
        std::string exe = executable_of(s, inf);
        s.out().line(cell(i == current ? "*" : "", 1) + cell(std::to_string(i + 1), 4) + cell(description(inf), 17) +
                     cell(connection_of(inf), connection_width) + cell(exe, 17));
        nlohmann::json row{{"number", i + 1}, {"current", i == current}, {"executable", exe}};
        if (live) {
            row["pid"] = inf.process->pid();
        }
        // gdb's notes under a vfork parent and child that still share their memory.
        if (auto child = inferior_of_pid(s, inf.vfork_child_pid)) {
            s.out().line(fmt::format("\tis vfork parent of inferior {}", *child + 1));
            row["vfork_child"] = *child + 1;
        }
        if (auto parent = inferior_of_pid(s, inf.vfork_parent_pid)) {
            s.out().line(fmt::format("\tis vfork child of inferior {}", *parent + 1));
            row["vfork_parent"] = *parent + 1;
        }
        rows.push_back(std::move(row));
    }
    s.out().field("inferiors", std::move(rows));
}

/// "[Switching to inferior 1 [process 1234] (/path/prog)]" with `verb`.
std::string switch_text(session& s, std::size_t index, std::string_view verb) {
    const auto& inf = *s.inferiors()[index];
    return fmt::format("[{} {} [{}] ({})]", verb, index + 1, description(inf), executable_of(s, inf));
}

void cmd_inferior(session& s, std::string_view args) {
    std::string a = trim_copy(args);
    if (is_job(s)) {
        error::send("The inferiors are the ranks of an MPI job: use `rank N` to select one.");
    }
    if (a.empty()) {
        std::size_t i = static_cast<std::size_t>(current_inferior_number(s) - 1);
        s.out().line(switch_text(s, i, "Current inferior is"));
        return;
    }
    int n = parse_id_number(a, "inferior");
    prune_inferiors(s);
    if (n < 1 || static_cast<std::size_t>(n) > s.inferiors().size()) {
        error::send(fmt::format("Inferior ID {} not known.", n));
    }
    std::size_t index = static_cast<std::size_t>(n - 1);
    s.switch_to(index);
    s.out().line(switch_text(s, index, "Switching to inferior"));
    auto* p = s.process();
    if (!p || !p->is_alive()) {
        return;
    }
    s.refresh_thread_numbers();
    pid_t tid = s.selected_tid() != 0 ? s.selected_tid() : p->pid();
    s.select_thread(tid);
    std::string number = qualified_thread_numbers(s) ? fmt::format("{}.{}", n, s.thread_number(tid))
                                                     : std::to_string(s.thread_number(tid));
    s.out().line(fmt::format("[Switching to thread {} ({})]", number, s.thread_target_id(tid)));
    auto& frames = s.stack(tid);
    if (!frames.empty()) {
        s.out().line(format_frame_line(s, frames.front(), true));
        if (std::string src = source_line_for(s, frames.front()); !src.empty()) {
            s.out().line(src);
        }
    }
}

}  // namespace

bool keeps_fork_children(session& s) {
    const auto& ev = s.process_events();
    return !is_job(s) && (ev.follow_child || !ev.detach_on_fork);
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
    s.out().event("vfork-parent-detached", {{"pid", parent_inf.process->pid()}, {"after", std::string(how)}},
                  fmt::format("[Detaching vfork parent process {} after child {}]", parent_inf.process->pid(), how));
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
    return !is_job(s);
}

void announce_released_child(session& s, const tracer::stop_reason& why) {
    const char* how = why.is_vfork ? "vfork" : "fork";
    s.out().event("fork-child-detached", {{"pid", why.new_tid}, {"how", how}},
                  fmt::format("[Detaching after {} from child process {}]", how, why.new_tid));
}

bool qualified_thread_numbers(session& s) {
    return s.inferiors().size() > 1 && !is_job(s);
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

void follow_fork(session& s, const tracer::stop_reason& why) {
    const auto& ev = s.process_events();
    const std::size_t parent_index = static_cast<std::size_t>(current_inferior_number(s) - 1);
    tracer::process* parent = s.process();
    if (parent == nullptr || why.new_tid <= 0) {
        return;
    }
    const pid_t parent_pid = parent->pid();
    const std::string parent_thread = s.thread_target_id(why.tid);
    const char* how = why.is_vfork ? "vfork" : "fork";
    std::unique_ptr<tracer::process> child;
    try {
        child = parent->adopt_fork_child(why.new_tid, why.is_vfork);
    } catch (const std::exception& e) {
        s.out().error(fmt::format("Cannot debug fork child {}: {}", why.new_tid, e.what()));
        return;
    }
    auto inf = std::make_unique<inferior>();
    inf->process = std::move(child);
    inf->pid = why.new_tid;
    s.inferiors().push_back(std::move(inf));
    const std::size_t child_index = s.inferiors().size() - 1;
    const int child_number = static_cast<int>(child_index + 1);
    if (ev.follow_child) {
        s.out().event("fork-followed", {{"parent", parent_pid}, {"child", why.new_tid}},
                      fmt::format("[Attaching after {} {} to child process {}]", parent_thread, how, why.new_tid));
    }
    s.out().event("inferior-added", {{"inferior", child_number}, {"pid", why.new_tid}},
                  fmt::format("[New inferior {} (process {})]", child_number, why.new_tid));

    // The child gets every breakpoint (its memory had ours taken out when it was kept).
    s.switch_to(child_index);
    s.refresh_thread_numbers();
    try {
        refresh_breakpoints(s, false);
    } catch (const std::exception& e) {
        s.out().error(e.what());
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
            move_watchpoints_to_child(s, why.tid);
        }
        return;
    }
    if (ev.detach_on_fork) {
        s.out().event("fork-detached", {{"pid", parent_pid}},
                      fmt::format("[Detaching after fork from parent process {}]", parent_pid));
        detach_inferior(s, parent_index);
        // The watchpoints go with the program the user follows.
        move_watchpoints_to_child(s, why.tid);
    }
}

void register_inferior_commands(command_table& t) {
    auto& info = t.prefix("info", {"i", "inf"}, "Generic command for showing things about the program being debugged.");
    info.add({"inferiors", {}, "Print a list of inferiors being managed.",
              "info inferiors\nNum, description (process N or <null>), connection and executable of each inferior; "
              "* marks the current one.",
              cmd_info_inferiors, false, nullptr});
    t.add({"inferior", {}, "Use this command to switch between inferiors.",
           "inferior [N]\nSwitches to inferior N (a fork child kept by follow-fork-mode child or detach-on-fork off); "
           "without N, shows the current inferior.",
           cmd_inferior, false, nullptr});
}

std::string& remote_program(session& s) {
    return s.model_state().get<remote_program_state>().name;
}

void take_attached_process(session& s, std::unique_ptr<tracer::process> proc) {
    const pid_t pid = proc->pid();
    // A program of another host whose file here is missing or another build is read from
    // the host (its module's file is the fetched copy): no program of this host to name.
    bool read_from_host = false;
    if (!proc->agent_host().empty()) {
        for (const auto& m : proc->modules()) {
            read_from_host |= m.is_executable && m.elf && m.elf->path() != m.path;
        }
    }
    if (!s.program() && !proc->executable().empty() && !read_from_host) {
        try {
            s.set_program(proc->executable(), {});
        } catch (const std::exception& e) {
            s.out().error(e.what());
        }
    }
    std::string host_exe = read_from_host ? proc->executable().string() : std::string();
    s.set_process(std::move(proc));
    remote_program(s) = host_exe.empty() || is_job(s) ? std::string() : remote_prefix + host_exe;
    s.count_start();
    s.out().field("pid", pid);
    refresh_breakpoints(s, false);
    s.refresh_thread_numbers();
    print_location(s, s.selected_tid(), true);
}

}  // namespace ompdbg::app
