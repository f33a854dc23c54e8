// ompdbg's command line: parses options (CLI11), sets up the session, runs the -ex/-x
// commands and then the prompt (or ends, in batch mode). main() only calls run_cli.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_main.hpp"
#include "cli_args.hpp"
#include "commands_core.hpp"
#include "commands_dmpl.hpp"
#include "commands_omp.hpp"
#include "dap/dap_server.hpp"
#include "line_editor.hpp"
#include "doctor.hpp"
#include "triage.hpp"
#include "line_sources.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace {

constexpr const char* usage_footer = R"(Targets:
  run PROG [ARGS...]   load PROG; it is started by the first `run`/`start` among the
                       -ex/-x commands or, if none of them started it, after them;
                       everything after PROG is the program's
  run -- PROG [ARGS...]  the same (`ompdbg run -- mpirun -np 4 ./prog`)
  attach PID           attach to a running process first, then run the commands
  core PROG CORE       examine a core dump of PROG (post-mortem)
  doctor [PROG | PID]  check what OpenMP/MPI debugging needs (the machine, a program or
                       a process) and say how to fix what is missing
  doctor --host HOST [PID]  the same on another host, through the gdbserver agent the
                       remote shell (--rsh CMD) starts there: the agent, its features,
                       ptrace there, and a process of that host
  dap                  serve the Debug Adapter Protocol on stdin/stdout (editors: VS Code,
                       nvim-dap...; docs/dap.md)
  triage PID | --core PROG CORE [--samples N] [--interval S] [--dot FILE]
                       attach (an mpirun: every rank), gather stacks, OpenMP states, message
                       queues and deadlocks, detach, print one report and a verdict; exit
                       status 0 nothing wrong, 1 gather failed, 2 usage, 3 deadlock, 4 hang,
                       5 crashed (core)
  PROG [CORE | PID]    load PROG (and a core file, or attach to the process PID), as gdb;
                       options may follow PROG (`ompdbg ./prog -ex run --batch`); start it
                       with `run` at the prompt
  PROG [OPTIONS] -- ARGS...  load PROG with the arguments after `--`
  --args PROG [ARGS...]  load PROG with its arguments, as gdb's --args (PROG may be named
                       run, core, ...)
  -- PROG [ARGS...]    the same: `--` ends ompdbg's options (`ompdbg --batch -ex bt -- ./prog`)

-ex and -x run in the order given. In batch mode there is no prompt; at the end a
launched program is killed and an attached one detached. The exit status is 0 when every
command succeeded; otherwise each failing command is named on stderr.)";

/// gdb's test for `gdb PROG PID`: all digits (and here: a process of that number exists).
bool is_pid_of_process(const std::string& word) {
    if (word.empty() || !std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return false;
    }
    std::error_code ec;
    return std::filesystem::exists("/proc/" + word, ec);
}

/// The end of batch mode, once the targets are ended (killed or detached) and the output
/// flushed: the remote connection is closed (its agent told to exit, its copies of remote
/// files removed), and the process exits without freeing what is left, which is memory:
/// every library's symbol tables, DWARF and their mappings. Freeing and unmapping it took
/// 0.5 ms of every `ompdbg --batch` (libc's debug file alone 0.2 ms), which the kernel does
/// faster at exit; a compiler driver skips the same teardown (clang's -disable-free).
[[noreturn]] void end_batch_without_teardown(ompdbg::app::session& s, int status) {
    s.set_remote(nullptr);
    s.out().flush();
    std::fflush(nullptr);
    std::_Exit(status);
}

/// The sanitizer build tears down as usual, so that LeakSanitizer still checks it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool batch_end_tears_down = true;
#else
constexpr bool batch_end_tears_down = false;
#endif

}  // namespace

int ompdbg::app::run_cli(int argc, char** argv) {
    using namespace ompdbg;
    std::vector<std::string> args(argv + 1, argv + argc);
    app::command_line cl = app::split_command_line(args);
    if (!cl.error.empty()) {
        std::fprintf(stderr, "%s\n", cl.error.c_str());
        return 2;
    }
    const std::vector<std::string>& options = cl.options;
    const std::vector<app::script_item>& script = cl.script;
    const std::vector<std::string>& target = cl.positionals;
    CLI::App app{"ompdbg: a debugger for OpenMP and MPI programs (gdb's commands)", "ompdbg"};
    app.footer(std::string("Usage: ompdbg [OPTIONS] (run [--] PROG [ARGS...] | attach PID | core PROG CORE |\n"
                           "                         PROG [CORE | PID] [OPTIONS] [-- ARGS...] | --args PROG [ARGS...])\n\n") +
               usage_footer);
    bool batch = false, json = false, version = false;
    std::vector<std::string> ex_cmds, x_files;
    std::string log_channels;
    app.add_flag("--batch", batch, "No prompt; kill/detach the target at the end; exit status tells success");
    app.add_option("--ex,--eval-command", ex_cmds, "Execute a command (repeatable, in order)")->take_all();
    app.add_option("-x,--command", x_files, "Execute commands from FILE (repeatable, in order)")->take_all();
    app.add_flag("--json", json, "Print one JSON object per command and per event");
    app.add_flag("--version", version, "Print the version and exit");
    app.add_option("--log", log_channels, "Enable log channels: ptrace,wait,dwarf,plugin,unwind,cli or all");
    bool quiet = false;
    app.add_flag("-q,--quiet,--nx", quiet, "Accepted for gdb compatibility");
    std::vector<std::string> plugin_paths;
    std::string ompd_library;
    app.add_option("--plugin-path", plugin_paths, "Allow debugger plugins (libompd, DMPL, MPI message-queue DLL) from DIR (repeatable)");
    app.add_option("--ompd-library", ompd_library, "libompd.so to use when the OpenMP runtime names none that loads");
    std::string rsh;
    app.add_option("--rsh", rsh, "Remote shell that starts gdbserver agents on other hosts (CMD HOST COMMAND; default: "
                                 "$OMPDBG_RSH, else ssh -T -o BatchMode=yes)");
    std::string dmpl_library;
    app.add_option("--dmpl-library", dmpl_library, "DMPL library to use instead of ompdbg's own for libomp/libgomp");
    try {
        std::vector<std::string> rev(options.rbegin(), options.rend());
        app.parse(rev);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (version) {
        std::printf("ompdbg %s\n", OMPDBG_VERSION);
        return 0;
    }
    if (!log_channels.empty()) {
        log::enable(log_channels);
    }
    if (!rsh.empty()) {
        // Through the environment, so that every session of this run (triage's too) and
        // `show remote-shell` see it; `set remote-shell` still overrides it.
        ::setenv("OMPDBG_RSH", rsh.c_str(), 1);
    }

    if (cl.verb == app::target_verb::dap) {
        return app::dap::run_dap(target);
    }
    if (cl.verb == app::target_verb::doctor || cl.verb == app::target_verb::triage) {
        debugger::plugin_trust_policy policy;
        for (const auto& dir : plugin_paths) {
            policy.allow_directory(dir);
        }
        return cl.verb == app::target_verb::doctor ? app::doctor_main(target, json, policy)
                                                   : app::triage_main(target, json, policy);
    }
    if (!cl.ignored.empty()) {
        // gdb's words: the first ignored argument, then "..." when there are more.
        std::fprintf(stderr, "Excess command line arguments ignored. (%s%s)\n", cl.ignored.front().c_str(),
                     cl.ignored.size() > 1 ? " ..." : "");
    }

    app::session s(json, batch);
    try {
        for (const auto& dir : plugin_paths) {
            s.allow_plugin_directory(dir);
        }
        if (!ompd_library.empty()) {
            app::omp_set_ompd_library(s, ompd_library);
        }
        if (!dmpl_library.empty()) {
            app::dmpl_set_library(s, dmpl_library);
        }
    } catch (const std::exception& e) {
        s.out().error(e.what());
        return 2;
    }
    app::install_interrupt_handler();
    bool setup_ok = true;
    bool auto_run = false;
    try {
        auto attach_pid = [&](const std::string& pid) {
            setup_ok = s.execute("attach " + pid);
            if (!setup_ok && batch) {
                std::fprintf(stderr, "ompdbg: command 'attach %s' failed\n", pid.c_str());
            }
        };
        switch (cl.verb) {
        case app::target_verb::run:
            auto_run = true;
            s.set_program(target[0], cl.program_args);
            break;
        case app::target_verb::attach:
            if (target.size() != 1) {
                s.out().error("ompdbg: usage: ompdbg attach PID");
                return 2;
            }
            attach_pid(target[0]);
            break;
        case app::target_verb::core:
            if (target.size() != 2) {
                s.out().error("ompdbg: usage: ompdbg core PROG CORE");
                return 2;
            }
            s.set_program(target[0], {});
            app::load_core(s, target[1]);
            break;
        case app::target_verb::program:
            s.set_program(target[0], cl.program_args);
            // gdb's `gdb PROG PID` / `gdb PROG CORE`: a number names a process when there is
            // one, anything else a core file.
            if (target.size() == 2) {
                if (is_pid_of_process(target[1])) {
                    attach_pid(target[1]);
                } else {
                    app::load_core(s, target[1]);
                }
            }
            break;
        default:
            break;
        }
    } catch (const std::exception& e) {
        // gdb ends these messages with a period ("/x: No such file or directory.").
        std::string msg = e.what();
        if (!msg.empty() && msg.back() != '.') {
            msg += '.';
        }
        s.out().error(msg);
        setup_ok = false;
        auto_run = false;
    }

    bool ok = setup_ok;
    // Consecutive -ex commands form one source (a `commands` body may follow in the next
    // -ex arguments); each -x file is its own and stops at its first error, as in gdb.
    std::size_t i = 0;
    while (i < script.size() && !s.quit_requested()) {
        if (script[i].is_file) {
            try {
                app::file_source src(script[i].text);
                ok = s.run_source(src, true) && ok;
            } catch (const std::exception& e) {
                s.out().error(e.what());
                ok = false;
            }
            ++i;
            continue;
        }
        std::vector<std::string> lines;
        while (i < script.size() && !script[i].is_file) {
            lines.push_back(script[i].text);
            ++i;
        }
        app::list_source src(std::move(lines));
        ok = s.run_source(src, false) && ok;
    }
    if (auto_run && s.start_count() == 0 && !s.quit_requested()) {
        ok = s.execute("run") && ok;
    }
    if (!batch && !s.quit_requested()) {
        bool tty = ::isatty(STDIN_FILENO) != 0;
        if (tty && !json) {
            app::line_editor editor(s);
            s.run_source(editor, false);
        } else {
            app::stdin_source src(!json, tty);
            s.run_source(src, false);
        }
    }
    s.end_target();
    s.out().flush();
    if (batch) {
        for (auto& f : s.failed_commands()) {
            std::fprintf(stderr, "ompdbg: command '%s' failed\n", f.c_str());
        }
        const int status = ok && s.failed_commands().empty() ? 0 : 1;
        if (!batch_end_tears_down) {
            end_batch_without_teardown(s, status);
        }
        return status;
    }
    return 0;
}
