// run, start, continue, next, step, stepi, nexti, finish, until, advance, kill, detach,
// attach, quit.
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "command_args.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "commands_inferiors.hpp"
#include "commands_mpi.hpp"
#include "commands_mpi2dd.hpp"
#include "commands_watch.hpp"
#include "commands_omp.hpp"
#include "run_control.hpp"
#include "stepping.hpp"
#include "stop_printer.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// A repeat count argument ("next 3"); 1 when absent.
int count_arg(std::string_view args) {
    auto a = trim_copy(args);
    if (a.empty()) {
        return 1;
    }
    try {
        std::size_t used = 0;
        long n = std::stol(a, &used, 0);
        if (used == a.size()) {
            return static_cast<int>(std::max(1L, n));
        }
    } catch (const std::logic_error&) {
    }
    error::send(fmt::format("No symbol \"{}\" in current context.", a));
}


void require_not_running_in_commands(session& s) {
    (void)s;
}

void plant_main_breakpoint(session& s);

/// Starts the program (killing a running one after asking, as gdb does).
/// Where `run`, `start` and `starti` stop first.
enum class first_stop { none, main, first_instruction };

/// Stops at the program's first instruction (gdb's starti): nothing runs.
void report_first_instruction(session& s) {
    s.out().line("");
    s.out().line("Program stopped.");
    print_location(s, s.selected_tid(), true);
}

/// What every start shares: the new process becomes the session's, breakpoints and
/// watchpoints go in, then it runs to its first stop.
void begin_run(session& s, std::unique_ptr<tracer::process> proc, first_stop stop) {
    s.set_process(std::move(proc));
    s.count_start();
    s.out().field("pid", s.process()->pid());
    refresh_breakpoints(s, false);
    rearm_watchpoints(s);
    if (stop == first_stop::first_instruction) {
        report_first_instruction(s);
        return;
    }
    if (stop == first_stop::main) {
        plant_main_breakpoint(s);
    }
    continue_until_stop(s);
}

void start_program(session& s, std::string_view args, first_stop stop) {
    const bool stop_at_main = stop == first_stop::main;
    // gdb: over extended-remote, `set remote exec-file` names the program without a file here
    // (its symbols then come from the host, read through the agent).
    const std::string& remote_exec = s.settings().remote_exec_file;
    if (!s.program() && !(s.remote() && !remote_exec.empty())) {
        error::send("No executable file specified.\nUse the \"file\" or \"exec-file\" command.");
    }
    if (s.process() && s.process()->is_alive()) {
        if (!s.query("The program being debugged has been started already.\nStart it from the beginning? ")) {
            error::send("Program not restarted.");
        }
        s.end_target();
    }
    if (!trim_copy(args).empty()) {
        auto parsed = parse_run_arguments(args);
        s.program_args() = std::move(parsed.words);
        s.settings().redirections = std::move(parsed.redirections);
        s.settings().args_text = trim_copy(args);
    }
    // gdb sets `start`'s temporary breakpoint before the program starts: its line comes
    // first and shows main where the program was last (its file address before any run).
    // A job's starter stops its ranks at main its own way; a remote exec-file without a
    // local program has no symbols before the agent starts it.
    if (stop_at_main && s.program() && !is_mpi2dd_starter(*s.program()) && !is_mpi_starter(*s.program())) {
        plant_main_breakpoint(s);
        stop = first_stop::none;   // planted: the run only goes on to it
    }
    std::string shown = s.remote() && !remote_exec.empty() ? remote_exec : s.program()->string();
    for (auto& a : s.program_args()) {
        shown += " " + a;
    }
    if (!s.is_batch()) {
        s.out().line(fmt::format("Starting program: {} ", shown));
    }
    if (s.remote()) {
        // `target extended-remote` then `run`: the agent starts `set remote exec-file`, else the
        // program (the same path on its host), stopped at its first instruction; breakpoints
        // go in, then it runs.
        std::filesystem::path host_program = remote_exec.empty() ? *s.program() : std::filesystem::path(remote_exec);
        begin_run(s, tracer::remote_process::launch(s.remote(), host_program, s.program_args(), s.elf_provider()),
                  stop);
        return;
    }
    if (is_mpi2dd_starter(*s.program(), s.elf_provider())) {
        // `run -- mpi2dd-run -np N prog`: acquire every rank through MPI2DD (preferred over
        // MPIR when the starter has both).
        start_mpi2dd_job(s, *s.program(), s.program_args(), cli_job_options(s, true));
        if (!stop_at_main) {
            continue_until_stop(s);
        }
        return;
    }
    if (is_mpi_starter(*s.program())) {
        // `run -- mpirun -np N prog`: acquire every rank through MPIR (`start` stops there).
        start_mpi_job(s, *s.program(), s.program_args(), cli_job_options(s, true));
        if (!stop_at_main) {
            continue_until_stop(s);
        }
        return;
    }
    tracer::launch_options opts;
    opts.env = agent_launch_environment(s, omp_launch_environment(opts.env));
    if (s.out().is_json()) {
        // stdout carries only JSON objects (docs/json.md): the program writes to stderr.
        opts.stdout_fd = 2;
    }
    const auto& redirect = s.settings().redirections;
    opts.stdin_path = redirect.in;
    opts.stdout_path = redirect.out;
    opts.stdout_append = redirect.out_append;
    opts.stderr_path = redirect.err;
    opts.stderr_append = redirect.err_append;
    opts.stderr_to_stdout = redirect.err_to_out;
    opts.elves = s.elf_provider();
    begin_run(s, tracer::process::launch(*s.program(), s.program_args(), opts), stop);
}

/// `start`'s temporary breakpoint at main.
void plant_main_breakpoint(session& s) {
    std::string why;
    auto locs = resolve_spec(s, "main", why);
    if (locs.empty()) {
        error::send("No symbol table loaded.  Use the \"file\" command.");
    }
    breakpoint bp;
    bp.number = s.next_breakpoint_number();
    bp.spec = "main";
    bp.temporary = true;
    bp.locations = locs;
    if (locs.front().file.empty()) {   // main without line information
        s.out().line(fmt::format("Temporary breakpoint {} at {:#x}", bp.number, locs.front().address.addr()));
    } else {
        s.out().line(fmt::format("Temporary breakpoint {} at {:#x}: file {}, line {}.", bp.number,
                                 locs.front().address.addr(), source_display_name(s, locs.front().file),
                                 locs.front().line));
    }
    s.breakpoints()[bp.number] = std::move(bp);
    sync_breakpoint_sites(s);
}

void cmd_continue(session& s, std::string_view args) {
    auto& st = s.bp_commands_state();
    s.require_process();
    int n = count_arg(args);
    if (n > 1) {
        // gdb: set the ignore count of the breakpoint we are stopped at.
        if (auto* t = s.process()->find_thread(s.selected_tid())) {
            auto hits = breakpoints_at(s, t->regs().pc());
            if (!hits.empty()) {
                hits.front().first->ignore_count = n - 1;
                sync_fast_sites(s);   // the agent ignores them when it serves the site
                // gdb says so only from a terminal (from_tty).
                if (!s.is_batch() && !st.in_breakpoint_commands) {
                    s.out().line(fmt::format("Will ignore next {} crossings of breakpoint {}.  Continuing.", n - 1,
                                             hits.front().first->number));
                }
            }
        }
    } else if (!s.is_batch() && !st.in_breakpoint_commands) {
        s.out().line("Continuing.");
        s.out().flush();   // before the program runs, as gdb does: a job may run long
    }
    if (st.in_breakpoint_commands) {
        st.resume_requested = true;
        return;
    }
    continue_until_stop(s);
}

void cmd_attach(session& s, std::string_view args) {
    auto a = trim_copy(args);
    if (a.empty()) {
        error::send("Argument required (process-id to attach).");
    }
    pid_t pid = parse_process_id(a);
    if (s.process() && s.process()->is_alive()) {
        error::send("A program is being debugged already.  Kill it first (\"kill\").");
    }
    if (!s.is_batch()) {
        s.out().line(fmt::format("Attaching to process {}", pid));
    }
    auto proc = s.attach_process(pid);
    // An MPI starter's ranks are attached on this host: not yet for a starter reached
    // through an agent, whose ranks live on other hosts (issue 18).
    if (!s.remote() && (attach_mpi2dd_job(s, proc, cli_job_options(s, false)) ||
                         attach_mpi_job(s, proc, false, cli_job_options(s, false)))) {
        return;   // an MPI starter: its ranks are the inferiors now
    }
    take_attached_process(s, std::move(proc));
}

void cmd_detach(session& s, std::string_view) {
    auto& p = s.require_process();
    pid_t pid = p.pid();
    if (!s.is_batch()) {
        s.out().line(fmt::format("Detaching from program: {}, process {}", p.executable().string(), pid));
    }
    p.detach();
    s.out().event("detached", {{"pid", pid}}, fmt::format("[Inferior {} (process {}) detached]", current_inferior_number(s), pid));
    s.drop_process();
}

void cmd_kill(session& s, std::string_view) {
    if (!s.process() || !s.process()->is_alive()) {
        error::send("The program is not being run.");
    }
    if (!s.query("Kill the program being debugged? ")) {
        error::send("Not confirmed.");
    }
    pid_t pid = s.process()->pid();
    s.process()->kill();
    s.out().event("killed", {{"pid", pid}}, fmt::format("[Inferior {} (process {}) killed]", current_inferior_number(s), pid));
    s.drop_process();
}

}  // namespace

void register_control_commands(command_table& t) {
    t.add({"run", {"r"}, "Start debugged program.",
           "run [ARGS...]\nStarts the program with ARGS (or the arguments of the last run / the command line).",
           [](session& s, std::string_view a) { start_program(s, a, first_stop::none); }, false, nullptr});
    t.add({"start", {}, "Start the debugged program, stopping at the beginning of the main procedure.",
           "start [ARGS...]\nLike run with a temporary breakpoint on main.",
           [](session& s, std::string_view a) { start_program(s, a, first_stop::main); }, false, nullptr});
    t.add({"starti", {}, "Start the debugged program stopping at the first instruction.",
           "starti [ARGS]\nRuns the program with ARGS (or the last ones), stopped at its first instruction (the "
           "dynamic loader's entry for a dynamically linked program), before any of its code runs.",
           [](session& s, std::string_view a) { start_program(s, a, first_stop::first_instruction); }, false, nullptr});
    t.add({"continue", {"c", "cont", "fg"}, "Continue program being debugged, after signal or breakpoint.",
           "continue [N]\nWith N, ignore the current breakpoint N-1 more times.", cmd_continue, true, nullptr});
    t.add({"next", {"n"}, "Step program, proceeding through subroutine calls.",
           "next [N]\nLike \"step\" but calls are stepped over.",
           [](session& s, std::string_view a) { step_lines(s, step_mode::next, count_arg(a)); }, true, nullptr});
    t.add({"step", {"s"}, "Step program until it reaches a different source line.",
           "step [N]\nSteps into functions that have line information.",
           [](session& s, std::string_view a) { step_lines(s, step_mode::step, count_arg(a)); }, true, nullptr});
    t.add({"stepi", {"si"}, "Step one instruction exactly.", "stepi [N]",
           [](session& s, std::string_view a) { step_instructions(s, false, count_arg(a)); }, true, nullptr});
    t.add({"nexti", {"ni"}, "Step one instruction, but proceed through subroutine calls.", "nexti [N]",
           [](session& s, std::string_view a) { step_instructions(s, true, count_arg(a)); }, true, nullptr});
    t.add({"finish", {"fin"}, "Execute until selected stack frame returns.",
           "finish\nPrints the caller's location and the value returned.",
           [](session& s, std::string_view) { finish_frame(s); }, false, nullptr});
    t.add({"until", {"u"}, "Execute until past the current line or past a LOCATION.",
           "until [LOCATION]\nWithout LOCATION like \"next\" but never stops in a backward jump (loops).",
           [](session& s, std::string_view a) {
               if (trim_copy(a).empty()) {
                   step_lines(s, step_mode::until, 1);
               } else {
                   run_until_location(s, trim_copy(a));
               }
           },
           true, nullptr});
    t.add({"advance", {}, "Continue the program up to the given location (same form as args for break command).",
           "advance LOCATION",
           [](session& s, std::string_view a) {
               if (trim_copy(a).empty()) {
                   error::send("Argument required (a location).");
               }
               run_until_location(s, trim_copy(a));
           },
           false, nullptr});
    t.add({"kill", {"k"}, "Kill execution of program being debugged.", "kill", cmd_kill, false, nullptr});
    t.add({"detach", {}, "Detach a process or file previously attached.",
           "detach\nRestores every patched byte and lets the process run on.", cmd_detach, false, nullptr});
    t.add({"attach", {}, "Attach to a process or file outside of GDB.", "attach PID", cmd_attach, false, nullptr});
    t.add({"quit", {"q", "exit"}, "Exit ompdbg.",
           "quit\nA launched program is killed, an attached one detached.",
           [](session& s, std::string_view) { s.request_quit(); }, false, nullptr});
    (void)require_not_running_in_commands;
}

}  // namespace ompdbg::app
