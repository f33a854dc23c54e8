// `info inferiors` and `inferior [N]` over the inferiors a fork adds (the model's
// run/fork_follow.cpp). The session keeps one inferior per process; gdb numbers them from
// 1 in the order they appeared, which is their index here plus one.
#include "commands_inferiors.hpp"

#include <optional>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "command_args.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// gdb's prefix of a file read through the remote target (its sysroot "target:").
constexpr const char* remote_prefix = "target:";

/// The program of the session read from its host through the agent, as gdb names it.
struct remote_program_state {
    std::string name;
};

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
    if (auto& remote = remote_program(s); !remote.empty() && !inferiors_are_ranks(s) && &inf == s.inferiors().front().get()) {
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
    while (list.size() > 1 && !inferiors_are_ranks(s) && list.back().get() != &s.current_inferior() &&
           !(list.back()->process && list.back()->process->is_alive())) {
        list.pop_back();
    }
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
    if (inferiors_are_ranks(s)) {
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
    remote_program(s) = host_exe.empty() || inferiors_are_ranks(s) ? std::string() : remote_prefix + host_exe;
    s.count_start();
    s.out().field("pid", pid);
    refresh_breakpoints(s, false);
    s.refresh_thread_numbers();
    print_location(s, s.selected_tid(), true);
}

}  // namespace ompdbg::app
