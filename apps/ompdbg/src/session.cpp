#include "session.hpp"
#include "cli_eval_hooks.hpp"
#include "command_args.hpp"

#include "commands_compare.hpp"
#include "commands_inferiors.hpp"
#include "commands_mpi.hpp"
#include "commands_mpi2dd.hpp"
#include "commands_dmpl.hpp"
#include "commands_mpi_queues.hpp"
#include "commands_omp.hpp"
#include "run_control.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"


#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// gdb splits a command word at the first character that cannot be part of a name, so
// "p/x v" is `p` with "/x v" and "x/4xw &a" is `x` with "/4xw &a".
std::pair<std::string_view, std::string_view> split_word(std::string_view line) {
    line = trim(line);
    std::size_t n = 0;
    while (n < line.size() && is_word_char(line[n])) {
        ++n;
    }
    if (n == 0 && !line.empty()) {
        n = 1;   // "!" or "|" style one-character commands
    }
    return {line.substr(0, n), trim(line.substr(n))};
}

}  // namespace

session::session(bool json, bool batch, std::FILE* out, std::FILE* err)
    : out_(json, out, err), batch_(batch), observer_(out_, batch_), eval_hooks_(std::make_unique<cli_eval_hooks>(*this)) {
    set_observer(observer_);
    set_evaluation_hooks(*eval_hooks_);
    settings().local_hosts = local_hosts_of_environment();
    register_control_commands(commands_);
    register_breakpoint_commands(commands_);
    register_thread_commands(commands_);
    register_stack_commands(commands_);
    register_data_commands(commands_);
    register_info_line_command(commands_);
    register_symbol_commands(commands_);
    register_misc_commands(commands_);
    register_prompt_commands(commands_);
    register_settings_commands(commands_);
    register_watch_commands(commands_);
    register_dump_commands(commands_);
    register_omp_commands(commands_);
    register_mpi_commands(commands_);
    register_mpi_queue_commands(commands_);
    register_mpi2dd_commands(commands_);
    register_compare_commands(commands_);   // adds to omp, thread, mpi and rank
    register_core_commands(commands_);
    register_signal_commands(commands_);
    register_inferior_commands(commands_);
    register_remote_commands(commands_);
    register_script_commands(commands_);
    register_shell_commands(commands_);
    register_dmpl_commands(commands_);  // wraps bt, info locals and omp commands: last
}

session::~session() {
    // The target ends and the model's session-wide state goes while the CLI's parts
    // (output, commands, scripts) still exist: the order the one session class had.
    end_target();
    model_state().clear();
}

mpi_job* session::job() {
    return job_of(*this);
}

bool session::execute(std::string_view line_in, bool propagate_errors) {
    std::string_view line = trim(line_in);
    if (line.empty()) {
        if (last_repeatable_.empty()) {
            return true;
        }
        std::string again = last_repeatable_;
        return execute(again, propagate_errors);
    }
    if (line.front() == '#') {
        return true;
    }
    out_.begin_command(line);
    for (auto& inf : inferiors()) {
        if (inf && inf->process) {
            inf->process->forget_cached_memory();
        }
    }
    bool ok = true;
    try {
        auto [word, args] = split_word(line);
        const command* cmd = commands_.find(word);
        if (!cmd) {
            error::send(fmt::format("Undefined command: \"{}\".  Try \"help\".", word));
        }
        std::string path = cmd->name;
        // Descend into prefix commands: "info breakpoints", "thread apply all bt".
        while (cmd->subcommands) {
            auto [sub_word, sub_args] = split_word(args);
            const command* sub = sub_word.empty() ? nullptr : cmd->subcommands->find(sub_word);
            if (!sub) {
                if (cmd->handler) {
                    break;
                }
                if (sub_word.empty()) {
                    std::string names;
                    for (auto& c : cmd->subcommands->all()) {
                        out_.line(fmt::format("{} {} -- {}", path, c.name, c.summary));
                    }
                    error::send(fmt::format("\"{}\" must be followed by the name of a subcommand.", path));
                }
                error::send(fmt::format("Undefined {} command: \"{}\".  Try \"help {}\".", path, sub_word, path));
            }
            cmd = sub;
            args = sub_args;
            path += " " + cmd->name;
        }
        // gdb repeats `list` and `x` without their arguments: Enter continues after the last
        // lines listed / the last address examined instead of showing the same again.
        if (!cmd->repeat_on_enter) {
            last_repeatable_.clear();
        } else if (path == "list" || path == "x") {
            last_repeatable_ = path;
        } else {
            last_repeatable_ = std::string(line);
        }
        if (!cmd->handler) {
            error::send(fmt::format("\"{}\" must be followed by the name of a subcommand.", path));
        }
        if (is_mpi_session(*this)) {
            std::string top(commands_.find(word)->name);
            if (!mpi_execute(*this, top, line.substr(word.size()), [&] { cmd->handler(*this, args); })) {
                error::send("The command failed in some ranks.");
            }
        } else {
            cmd->handler(*this, args);
        }
    } catch (const std::exception& e) {
        ok = false;
        last_repeatable_.clear();
        if (propagate_errors) {
            out_.end_command(false);
            throw;
        }
        std::string where = sources_.empty() ? std::string() : sources_.back()->where();
        out_.error(where.empty() ? std::string(e.what())
                                 : fmt::format("{}: Error in sourced command file:\n{}", where, e.what()));
    }
    out_.end_command(ok);
    out_.flush();
    return ok;
}

bool session::run_source(line_source& src, bool stop_on_error) {
    sources_.push_back(&src);
    bool all_ok = true;
    while (!quit_) {
        auto line = src.next_line("(ompdbg) ");
        if (!line) {
            break;
        }
        if (!execute(*line)) {
            all_ok = false;
            failed_.push_back(std::string(trim(*line)));
            if (stop_on_error) {
                break;
            }
        }
    }
    sources_.pop_back();
    return all_ok;
}

std::optional<std::string> session::read_body_line(std::string_view prompt) {
    if (sources_.empty()) {
        return std::nullopt;
    }
    return sources_.back()->next_line(prompt);
}

bool session::query(const std::string& question, bool default_no) {
    if (!settings().confirm) {
        return !default_no;   // `set confirm off`: gdb asks nothing and takes the default
    }
    bool interactive = !sources_.empty() && sources_.back()->is_interactive() && !batch_;
    const std::string choices = default_no ? "(y or [n])" : "(y or n)";
    if (!interactive) {
        out_.line(question + choices + " [answered Y; input not from terminal]");
        return true;
    }
    while (true) {
        auto answer = read_body_line(question + choices + " ");
        if (!answer) {
            out_.line("EOF [answered Y; input not from terminal]");
            return true;
        }
        auto a = trim(*answer);
        if (a.empty()) {
            if (default_no) {
                return false;
            }
            continue;
        }
        if (a[0] == 'y' || a[0] == 'Y') {
            return true;
        }
        if (a[0] == 'n' || a[0] == 'N') {
            return false;
        }
        out_.line("Please answer y or n.");
    }
}

}  // namespace ompdbg::app
