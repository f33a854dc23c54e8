#include "cli_args.hpp"

#include <algorithm>
#include <cctype>

namespace ompdbg::app {

namespace {

/// The options of ours that take a value (the next argument, or after `=`).
bool takes_value(const std::string& opt) {
    static const char* with_value[] = {"--ex", "--eval-command", "-x", "--command", "--log",
                                       "--ompd-library", "--plugin-path", "--dmpl-library", "--rsh"};
    return std::any_of(std::begin(with_value), std::end(with_value), [&](const char* o) { return opt == o; });
}

bool is_script_option(const std::string& opt) {
    return opt == "--ex" || opt == "--eval-command" || opt == "-x" || opt == "--command";
}

bool is_option(const std::string& a) {
    return a.size() > 1 && a[0] == '-';
}

target_verb verb_of(const std::string& word) {
    if (word == "run" || word == "r") {
        return target_verb::run;
    }
    if (word == "attach") {
        return target_verb::attach;
    }
    if (word == "core") {
        return target_verb::core;
    }
    if (word == "doctor") {
        return target_verb::doctor;
    }
    if (word == "triage") {
        return target_verb::triage;
    }
    if (word == "dap") {
        return target_verb::dap;
    }
    return target_verb::program;
}

}  // namespace

std::string normalise_option(const std::string& a) {
    static const char* long_ones[] = {"-ex", "-batch", "-eval-command", "-command", "-json", "-version",
                                      "-help", "-quiet", "-nx", "-log", "-args"};
    for (const char* l : long_ones) {
        std::string s(l);
        if (a == s || a.rfind(s + "=", 0) == 0) {
            return "-" + a;
        }
    }
    return a;
}

command_line split_command_line(const std::vector<std::string>& args) {
    command_line cl;
    auto rest_from = [&](std::size_t i) {
        return std::vector<std::string>(args.begin() + static_cast<long>(std::min(i, args.size())), args.end());
    };
    // The program and its arguments: what follows `--args`, or `--` before any target.
    auto take_program = [&](std::size_t i, const char* after) {
        auto rest = rest_from(i);
        if (rest.empty()) {
            cl.error = std::string("ompdbg: ") + after + " needs a program: ompdbg " + after + " PROG [ARGS...]";
            return;
        }
        cl.verb = target_verb::program;
        cl.positionals = {rest[0]};
        cl.program_args.assign(rest.begin() + 1, rest.end());
        cl.has_program_args = true;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string a = normalise_option(args[i]);
        if (a == "--args") {
            if (cl.verb != target_verb::none) {
                cl.error = "ompdbg: --args must come before the program: ompdbg [OPTIONS] --args PROG [ARGS...]";
            } else {
                take_program(i + 1, "--args");
            }
            return cl;
        }
        if (a == "--") {
            switch (cl.verb) {
            case target_verb::none:
                take_program(i + 1, "--");
                break;
            case target_verb::run:   // `run -- PROG ARGS...`
                if (i + 1 >= args.size()) {
                    cl.error = "ompdbg: `run` needs a program: ompdbg run PROG [ARGS...]";
                    break;
                }
                cl.positionals = {args[i + 1]};
                cl.program_args = rest_from(i + 2);
                cl.has_program_args = true;
                break;
            case target_verb::program:   // `PROG [OPTIONS] -- ARGS...`
                if (cl.positionals.size() > 1) {
                    cl.error = "ompdbg: the program's arguments after `--` cannot follow a core file or PID";
                    break;
                }
                cl.program_args = rest_from(i + 1);
                cl.has_program_args = true;
                break;
            default: {   // attach, core: only positionals follow
                auto rest = rest_from(i + 1);
                cl.positionals.insert(cl.positionals.end(), rest.begin(), rest.end());
                break;
            }
            }
            return cl;
        }
        if (is_option(a)) {
            std::string name = a, value;
            bool inline_value = false;
            if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
                name = a.substr(0, eq);
                value = a.substr(eq + 1);
                inline_value = true;
            }
            if (takes_value(name) && !inline_value) {
                if (i + 1 >= args.size()) {
                    cl.options.push_back(name);   // CLI11 names the missing value
                    continue;
                }
                value = args[++i];
                inline_value = true;
            }
            cl.options.push_back(name);
            if (inline_value) {
                cl.options.push_back(value);
            }
            if (is_script_option(name) && inline_value) {
                cl.script.push_back(script_item{name == "-x" || name == "--command", value});
            }
            continue;
        }
        // A positional word.
        if (cl.verb == target_verb::none) {
            cl.verb = verb_of(a);
            if (cl.verb == target_verb::program) {
                cl.positionals.push_back(args[i]);
            } else if (cl.verb == target_verb::doctor || cl.verb == target_verb::triage || cl.verb == target_verb::dap) {
                // Their own options follow (triage --samples N ...); `--` first is only a separator.
                auto rest = rest_from(i + 1);
                if (!rest.empty() && rest.front() == "--") {
                    rest.erase(rest.begin());
                }
                cl.positionals = std::move(rest);
                return cl;
            }
            continue;
        }
        if (cl.verb == target_verb::run) {   // `run [OPTIONS] PROG ARGS...`
            cl.positionals = {args[i]};
            cl.program_args = rest_from(i + 1);
            cl.has_program_args = true;
            return cl;
        }
        cl.positionals.push_back(args[i]);
    }
    if (cl.verb == target_verb::run && cl.positionals.empty()) {
        cl.error = "ompdbg: `run` needs a program: ompdbg run PROG [ARGS...]";
    }
    // gdb: `gdb PROG [CORE | PID]`; further words are ignored with a warning.
    if (cl.verb == target_verb::program && cl.positionals.size() > 2) {
        cl.ignored.assign(cl.positionals.begin() + 2, cl.positionals.end());
        cl.positionals.resize(2);
    }
    return cl;
}

}  // namespace ompdbg::app
