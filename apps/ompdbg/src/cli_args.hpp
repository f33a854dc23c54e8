#pragma once
/// Splits ompdbg's argv into its own options (for CLI11), the -ex/-x script in order, and
/// the target: a verb (`run`, `attach`, `core`, `doctor`, `triage`, `dap`) or a plain PROG, gdb's
/// way: options may come before or after a plain PROG, `--` ends ompdbg's options, and
/// everything after `run PROG`, `--args PROG` or `PROG --` belongs to the program.

#include <string>
#include <vector>

namespace ompdbg::app {

enum class target_verb { none, program, run, attach, core, doctor, triage, dap };

struct script_item {
    bool is_file = false;   ///< -x FILE (else -ex COMMAND)
    std::string text;
};

struct command_line {
    std::vector<std::string> options;   ///< ompdbg's options, spelt with two dashes, values after them
    std::vector<script_item> script;    ///< -ex and -x in the order given
    target_verb verb = target_verb::none;
    /// program: PROG then gdb's second positional (a core file or a PID), if any;
    /// run: PROG; attach: PID; core: PROG CORE; doctor/triage: their own arguments.
    std::vector<std::string> positionals;
    std::vector<std::string> program_args;   ///< the program's arguments (run, --args, PROG --)
    bool has_program_args = false;           ///< the arguments were given (even none), not gdb's second positional
    std::string error;                       ///< a usage error, empty when none
    std::vector<std::string> ignored;        ///< gdb's "Excess command line arguments ignored."
};

/// gdb spells its long options with one dash (-ex, -batch); CLI11 wants two.
std::string normalise_option(const std::string& arg);

/// Splits `args` (argv without argv[0]) as described above. Never throws.
command_line split_command_line(const std::vector<std::string>& args);

}  // namespace ompdbg::app
