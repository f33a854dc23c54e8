// gdb's `set`/`show` of user settings: confirm, pagination, width, height, listsize, args,
// print elements/repeats/pretty, breakpoint pending, and `show version`; ompdbg's
// omp-bt-filter, remote-shell and mpi-local-hosts. gdb scripts start with several of
// them (`set pagination off`, `set confirm off`, `set print pretty on`); each either changes
// what ompdbg does or, for paging and wrapping that ompdbg never does, is honoured as is.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "command_args.hpp"
#include "command_prefix.hpp"
#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "ompdbg/tracer/remote_process.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// gdb's `uinteger`/`unlimited` settings: a number, or 0 / "unlimited" for no limit.
std::optional<std::uint64_t> parse_limit(std::string_view args) {
    std::string a(trim(args));
    if (a.empty()) {
        error::send("Argument required (integer to set it to, or \"unlimited\").");
    }
    if (a == "unlimited") {
        return std::nullopt;
    }
    std::uint64_t n = 0;
    for (char c : a) {
        if (c < '0' || c > '9' || n > UINT32_MAX) {
            error::send(fmt::format("No symbol \"{}\" in current context.", a));
        }
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (n > UINT32_MAX) {
        error::send(fmt::format("integer {} out of range", a));
    }
    return n == 0 ? std::nullopt : std::optional(n);
}

std::string on_off(bool v) { return v ? "on" : "off"; }

std::string limit_text(std::uint64_t n) { return n == SIZE_MAX ? "unlimited" : std::to_string(n); }


/// One setting: how `set NAME` parses and stores it, how `show NAME` reads.
struct setting {
    const char* name;
    const char* summary;
    void (*set)(session&, std::string_view);
    std::string (*show)(session&);
    const char* details = nullptr;   ///< more lines for `help set NAME`
};

const setting top_settings[] = {
    {"confirm", "Set whether to confirm potentially dangerous operations.",
     [](session& s, std::string_view a) { s.settings().confirm = parse_on_off(a); },
     [](session& s) { return "Whether to confirm potentially dangerous operations is " + on_off(s.settings().confirm) + "."; }},
    {"pagination", "Set state of pagination (ompdbg never pages its output).",
     [](session& s, std::string_view a) { s.settings().pagination = parse_on_off(a); },
     [](session& s) { return "State of pagination is " + on_off(s.settings().pagination) + "."; }},
    {"width", "Set number of characters ompdbg thinks are in a line (it never wraps).",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().width = n ? std::optional<unsigned>(static_cast<unsigned>(*n)) : std::nullopt;
     },
     [](session& s) {
         auto& w = s.settings().width;
         return "Number of characters ompdbg thinks are in a line is " + (w ? std::to_string(*w) : "unlimited") + ".";
     }},
    {"height", "Set number of lines ompdbg thinks are in a page (it never pages).",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().height = n ? std::optional<unsigned>(static_cast<unsigned>(*n)) : std::nullopt;
     },
     [](session& s) {
         auto& h = s.settings().height;
         return "Number of lines ompdbg thinks are in a page is " + (h ? std::to_string(*h) : "unlimited") + ".";
     }},
    {"listsize", "Set number of source lines ompdbg will list by default.",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().listsize = n ? static_cast<int>(*n) : 0;
     },
     [](session& s) {
         int n = s.settings().listsize;
         return "Number of source lines ompdbg will list by default is " + (n ? std::to_string(n) : "unlimited") + ".";
     }},
    {"args", "Set argument list to give program being debugged when it is started.",
     [](session& s, std::string_view a) {
         auto parsed = parse_run_arguments(a);
         s.program_args() = std::move(parsed.words);
         s.settings().redirections = std::move(parsed.redirections);
         s.settings().args_text = trim_copy(a);
     },
     [](session& s) {
         return "Argument list to give program being debugged when it is started is \"" + s.settings().args_text + "\".";
     }},
    {"may-call-functions", "Set permission to call functions in the program.",
     [](session& s, std::string_view a) { s.settings().may_call_functions = parse_on_off(a); },
     [](session& s) {
         return "Permission to call functions in the program is " + on_off(s.settings().may_call_functions) + ".";
     }},
    {"unwindonsignal", "Set unwinding of stack if a signal is received while in a call dummy.",
     [](session& s, std::string_view a) { s.settings().unwind_on_signal = parse_on_off(a); },
     [](session& s) {
         return "Unwinding of stack if a signal is received while in a call dummy is " +
                on_off(s.settings().unwind_on_signal) + ".";
     }},
    // Processes of other hosts (remote_ranks.hpp): the command that starts an agent there,
    // called as `CMD HOST gdbserver --multi -`, and the names that mean this machine.
    {"remote-shell", "Set the remote shell that starts a gdbserver agent on another host (CMD HOST COMMAND...).",
     [](session& s, std::string_view a) {
         std::string v = trim_copy(a);
         if (v.empty()) {
             error::send("Argument required (a remote shell command, e.g. \"ssh -T -o BatchMode=yes\").");
         }
         s.settings().remote_shell = v;
     },
     [](session& s) {
         return "The remote shell that starts a gdbserver agent on another host is \"" + remote_shell(s) + "\".";
     }},
    // gdb's setting, on by default here: processes of other hosts read code, read-only data
    // and unwind tables from the local file of the same build-id (a page through the agent is
    // an 8 kB packet; a backtrace of an MPI rank reads about a hundred).
    {"trust-readonly-sections", "Set mode for reading from readonly sections.",
     [](session&, std::string_view a) { tracer::remote_process::set_trust_readonly_sections(parse_on_off(a)); },
     [](session&) {
         return "Mode for reading from readonly sections is " + on_off(tracer::remote_process::trusts_readonly_sections()) +
                ".";
     }},
    {"mpi-local-hosts", "Set more names of this host (comma-separated): ranks on them are traced here.",
     [](session& s, std::string_view a) {
         s.settings().local_hosts = host_list(a);
     },
     [](session& s) {
         std::string list;
         for (auto& n : s.settings().local_hosts) {
             list += (list.empty() ? "" : ",") + n;
         }
         return "More names of this host are \"" + list + "\".";
     },
     "The environment variable OMPDBG_MPI_LOCAL_HOSTS (the same comma-separated list) sets them when ompdbg "
     "starts:\nneeded by `ompdbg attach STARTER_PID` of a job whose host names are not this host's (Slurm's node "
     "names),\nas the attach comes before any command."},
    // An attach to a starter whose tasks have not all answered its launch yet (their pids
    // are missing from MPIR_proctable) waits this long for them (commands_mpi.cpp).
    {"mpi-spawn-timeout", "Set how many seconds attaching to an MPI starter waits for its tasks to start.",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().mpi_spawn_timeout = n ? std::optional<unsigned>(static_cast<unsigned>(*n)) : std::nullopt;
     },
     [](session& s) {
         auto& t = s.settings().mpi_spawn_timeout;
         return "Attaching to an MPI starter waits " + (t ? std::to_string(*t) + " seconds" : std::string("unlimited")) +
                " for its tasks to start.";
     }},
    // LLVM's OMPD plugin for gdb has `ompd bt on|off`; here the fold is on by default, and
    // `omp bt continued` is where a worker's stack goes on in the encountering thread.
    {"omp-bt-filter", "Set whether bt folds the OpenMP runtime's frames of a parallel region into one line.",
     [](session& s, std::string_view a) { omp_bt_filter(s) = parse_on_off(a); },
     [](session& s) {
         return "Whether bt folds the OpenMP runtime's frames of a parallel region into one line is " +
                on_off(omp_bt_filter(s)) + ".";
     }},
};

const setting print_settings[] = {
    {"elements", "Set limit on string chars or array elements to print.",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().print.max_elements = s.settings().print.max_string = n ? *n : SIZE_MAX;
     },
     [](session& s) {
         return "Limit on string chars or array elements to print is " + limit_text(s.settings().print.max_elements) + ".";
     }},
    {"repeats", "Set threshold for repeated print elements.",
     [](session& s, std::string_view a) {
         auto n = parse_limit(a);
         s.settings().print.repeat_threshold = n ? *n : SIZE_MAX;
     },
     [](session& s) {
         return "Threshold for repeated print elements is " + limit_text(s.settings().print.repeat_threshold) + ".";
     }},
    {"pretty", "Set pretty formatting of structures.",
     [](session& s, std::string_view a) { s.settings().print.pretty = parse_on_off(a); },
     [](session& s) { return "Pretty formatting of structures is " + on_off(s.settings().print.pretty) + "."; }},
};

const setting breakpoint_settings[] = {
    {"pending", "Set debugger's behavior regarding pending breakpoints.",
     [](session& s, std::string_view a) {
         std::string v(trim(a));
         if (v == "auto") {
             s.settings().breakpoint_pending.reset();
         } else if (v.empty() || v == "on" || v == "1" || v == "yes" || v == "enable" || v == "off" || v == "0" ||
                    v == "no" || v == "disable") {
             s.settings().breakpoint_pending = parse_on_off(v);
         } else {
             error::send("\"on\", \"off\" or \"auto\" expected.");
         }
     },
     [](session& s) {
         const auto& p = s.settings().breakpoint_pending;
         return "Debugger's behavior regarding pending breakpoints is " + (p ? on_off(*p) : std::string("auto")) + ".";
     }},
    // Issue 21: conditions evaluated in the target by the agent (fast_breakpoints.hpp).
    {"fast", "Set whether breakpoint conditions are evaluated inside the program by ompdbg's agent.",
     [](session& s, std::string_view a) {
         s.settings().breakpoint_fast = parse_on_off(a);
         load_agent_on_demand(s);
         sync_fast_sites(s);
     },
     [](session& s) {
         return "Whether breakpoint conditions are evaluated inside the program by ompdbg's agent is " +
                on_off(fast_breakpoints_on(s)) + ".";
     }},
};

// gdb's `set remote ...` family; only exec-file matters here (the agent's other knobs are
// negotiated at connect).
const setting remote_settings[] = {
    {"exec-file", "Set the remote pathname for \"run\".",
     [](session& s, std::string_view a) { s.settings().remote_exec_file = trim_copy(a); },
     // gdb shows the path alone.
     [](session& s) { return s.settings().remote_exec_file; }},
};

void add_settings(command_table& set, command_table& show, const std::string& prefix, std::span<const setting> all) {
    for (const setting& st : all) {
        std::string full = prefix + st.name;
        std::string help = "set " + full + " VALUE\n" + st.summary + (st.details ? "\n" + std::string(st.details) : "");
        set.add(command{st.name, {}, st.summary, help,
                        [f = st.set](session& s, std::string_view a) { f(s, a); }, false, nullptr});
        std::string show_summary = std::string("Show") + (st.summary + 3);
        show.add(command{st.name, {}, show_summary, "show " + full + "\n" + show_summary,
                         [f = st.show](session& s, std::string_view) { s.out().line(f(s)); }, false, nullptr});
    }
}

}  // namespace

void register_settings_commands(command_table& t) {
    register_index_cache_commands(t);
    command_table& set = prefix_table(t, "set", "Evaluate expression EXP and assign result to variable VAR.");
    command_table& show = prefix_table(t, "show", "Generic command for showing things about the debugger.");
    add_settings(set, show, "", top_settings);
    command_table& set_print = set.prefix("print", {"p", "pr"}, "Generic command for setting how things print.");
    command_table& show_print = show.prefix("print", {"p", "pr"}, "Generic command for showing print settings.");
    add_settings(set_print, show_print, "print ", print_settings);
    command_table& set_breakpoint = set.prefix("breakpoint", {}, "Breakpoint specific settings.");
    command_table& show_breakpoint = show.prefix("breakpoint", {}, "Breakpoint specific settings.");
    add_settings(set_breakpoint, show_breakpoint, "breakpoint ", breakpoint_settings);
    command_table& set_remote = set.prefix("remote", {}, "Remote protocol specific variables.");
    command_table& show_remote = show.prefix("remote", {}, "Remote protocol specific variables.");
    add_settings(set_remote, show_remote, "remote ", remote_settings);
    show.add(command{"version", {}, "Show what version of ompdbg this is.", "show version",
                     [](session& s, std::string_view) {
                         s.out().line(fmt::format("ompdbg {}", OMPDBG_VERSION));
                         s.out().line("A debugger for OpenMP and MPI programs on Linux x86-64.");
                     },
                     false, nullptr});
}

}  // namespace ompdbg::app
