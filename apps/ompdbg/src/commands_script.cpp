// gdb's command language: `define` user commands ($arg0.., $argc), `document`, `source`,
// `if`/`else`/`end`, `while` with loop_break / loop_continue, `show user`. Bodies are read
// and run by command_block.cpp, the same reader as breakpoint `commands`.
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "command_args.hpp"
#include "command_block.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "line_sources.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "user_hooks.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// Whether the command came from a terminal (gdb's from_tty with an interactive stdin):
/// only then are the "Type commands for ..." hints shown.
bool typed_at_terminal(session& s, line_source* src) {
    return !s.is_batch() && src != nullptr && src->is_interactive();
}

/// `expr` evaluated in the selected frame; with no program, over the convenience
/// variables and literals alone, as gdb allows (`set $i = 0` before `file`).
dwarf::value evaluate_here(session& s, const std::string& expr) {
    if (s.target() == nullptr && !s.program()) {
        frame_context ctx(s);
        return dwarf::evaluate(expr, ctx);
    }
    frame_context ctx = frame_context::for_selection(s);
    return dwarf::evaluate(expr, ctx);
}

bool condition_holds(session& s, const std::string& expr) { return dwarf::is_true(evaluate_here(s, expr)); }

/// How much of our stack nested user commands may use: half of its limit.
std::uintptr_t stack_budget() {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        return std::uintptr_t{64} << 20;
    }
    return static_cast<std::uintptr_t>(rl.rlim_cur / 2);
}

}  // namespace

void run_user_command(session& s, const std::vector<std::string>& body, std::string_view args) {
    script_state& st = s.script();
    char marker = 0;
    const auto here = reinterpret_cast<std::uintptr_t>(&marker);
    if (st.call_args.empty()) {
        st.stack_base = here;
    }
    const bool stack_low = st.stack_base > here && st.stack_base - here > stack_budget();
    if ((st.max_call_depth != 0 && st.call_args.size() >= st.max_call_depth) || stack_low) {
        error::send("Max user call depth exceeded -- command aborted.");
    }
    st.call_args.push_back(split_user_args(args));
    struct pop_args {
        script_state& st;
        ~pop_args() { st.call_args.pop_back(); }
    } pop{st};
    run_lines(s, body);
}

namespace {

/// The text of `show user NAME`: the body indented two blanks a level, as gdb prints it.
void show_user_command(session& s, const std::string& name, const std::vector<std::string>& body) {
    s.out().line(fmt::format("User command \"{}\":", name));
    int depth = 1;
    for (const auto& line : body) {
        if (line == "end" || line == "else") {
            --depth;
        }
        s.out().line(std::string(static_cast<std::size_t>(std::max(depth, 0)) * 2, ' ') + line);
        if (line == "else") {
            ++depth;
        } else if (line != "end") {
            std::string_view w = std::string_view(line).substr(0, line.find_first_of(" \t"));
            if (w == "if" || w == "while" || w == "commands" || w == "define" || w == "document") {
                ++depth;
            }
        }
    }
}

/// Where `define WORDS` or `define-prefix WORDS` puts its command: the table of the prefix
/// commands the words before the last name (`define abc xyz`: abc's), the last word and
/// the full name ("abc xyz").
struct command_place {
    command_table* table;
    std::string leaf;
    std::string full;
};

command_place place_of(session& s, std::string_view args) {
    std::vector<std::string> words = split_args(args);
    if (words.empty()) {
        error::send("Argument required (name of command to define).");
    }
    for (const std::string& w : words) {
        for (char c : w) {
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
                error::send(fmt::format("Junk in argument list: \"{}\"", w.substr(w.find(c))));
            }
        }
    }
    command_place at{&s.commands(), words.back(), ""};
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const command* c = at.table->find(words[i]);
        if (c == nullptr || !c->subcommands) {
            error::send(at.full.empty() ? fmt::format("Undefined command: \"{}\".  Try \"help\".", words[i])
                                        : fmt::format("Undefined {}command: \"{}\".  Try \"help {}\".", at.full,
                                                      words[i], trim_copy(at.full)));
        }
        at.full += c->name + " ";
        at.table = c->subcommands.get();
    }
    at.full += at.leaf;
    return at;
}

void cmd_define(session& s, std::string_view args, line_source* from) {
    command_place at = place_of(s, args);
    const std::string& name = at.full;
    const command* existing = at.table->find(at.leaf);
    if (existing != nullptr && existing->name != at.leaf) {
        existing = nullptr;   // a prefix of another command's name: a new command
    }
    // A prefix made by define-prefix is the user's: it gets a body without a question.
    if (existing != nullptr && s.script().user_prefixes.count(name) != 0 && !s.script().user_commands.count(name)) {
        existing = nullptr;
    }
    std::string summary = "User-defined.";
    std::string help;
    if (existing != nullptr) {
        bool user = s.script().user_commands.count(name) > 0;
        std::string q = user ? fmt::format("Redefine command \"{}\"? ", name)
                             : fmt::format("Really redefine built-in command \"{}\"? ", name);
        if (!s.query(q)) {
            error::send(fmt::format("Command \"{}\" not redefined.", name));
        }
        if (user) {
            summary = existing->summary;
            help = existing->help;
        }
    }
    if (at.table == &s.commands()) {
        tie_hook(s, name);
    }
    if (typed_at_terminal(s, from)) {
        s.out().line(fmt::format("Type commands for definition of \"{}\".", name));
        s.out().line("End with a line saying just \"end\".");
    }
    auto body = std::make_shared<const std::vector<std::string>>(read_block(s, block_kind::define, 0).lines);
    s.script().user_commands[name] = body;
    s.script().hooked.insert(name);
    at.table->add({at.leaf, {}, summary, help,
                   with_hooks(name, [body](session& ss, std::string_view a) { run_user_command(ss, *body, a); }),
                   false, nullptr});
}

/// A prefix made by define-prefix with no body of its own: gdb's list of its subcommands
/// (not an error), or gdb's error for a word that names none of them.
void run_user_prefix(session& s, const std::string& full, std::string_view args) {
    std::vector<std::string> words = split_args(args);
    if (!words.empty()) {
        error::send(fmt::format("Undefined {} command: \"{}\".  Try \"help {}\".", full, words.front(), full));
    }
    command_place at = place_of(s, full + " x");
    s.out().line(fmt::format("\"{}\" must be followed by the name of a subcommand.", full));
    s.out().line(fmt::format("List of {} subcommands:", full));
    s.out().line("");
    std::vector<const command*> subs;
    for (const command& c : at.table->all()) {
        subs.push_back(&c);
    }
    std::sort(subs.begin(), subs.end(), [](const command* a, const command* b) { return a->name < b->name; });
    for (const command* c : subs) {
        s.out().line(fmt::format("{} {} -- {}", full, c->name, c->summary));
    }
    s.out().line("");
    s.out().line(fmt::format("Type \"help {}\" followed by {} subcommand name for full documentation.", full, full));
    s.out().line("Type \"apropos word\" to search for commands related to \"word\".");
    s.out().line("Type \"apropos -v word\" for full documentation of commands related to \"word\".");
    s.out().line("Command name abbreviations are allowed if unambiguous.");
}

/// `define-prefix WORDS`: makes a user command a prefix for `define WORDS SUB`, or a new
/// prefix command when none is named so; a built-in command cannot become one.
void cmd_define_prefix(session& s, std::string_view args) {
    command_place at = place_of(s, args);
    script_state& st = s.script();
    command* c = at.table->find_mutable(at.leaf);
    if (c != nullptr && c->name == at.leaf) {
        if (!st.user_commands.count(at.full) && !st.user_prefixes.count(at.full)) {
            error::send(fmt::format("Command \"{}\" is built-in.", at.full));
        }
        if (!c->subcommands) {
            c->subcommands = std::make_shared<command_table>();
        }
        st.user_prefixes.insert(at.full);
        return;
    }
    st.user_prefixes.insert(at.full);
    at.table->add({at.leaf, {}, "User-defined.", "",
                   [full = at.full](session& ss, std::string_view a) { run_user_prefix(ss, full, a); }, false,
                   std::make_shared<command_table>()});
}

void cmd_document(session& s, std::string_view args, line_source* from) {
    std::string name = trim_copy(args);
    if (name.empty()) {
        error::send("Argument required (name of command to define).");
    }
    const command* c = s.commands().find(name);
    if (c == nullptr) {
        error::send(fmt::format("Undefined command: \"{}\".", name));
    }
    std::string full = c->name;
    if (!s.script().user_commands.count(full)) {
        error::send(fmt::format("Command \"{}\" is built-in.", full));
    }
    if (typed_at_terminal(s, from)) {
        s.out().line(fmt::format("Type documentation for \"{}\".", full));
        s.out().line("End with a line saying just \"end\".");
    }
    auto lines = read_block(s, block_kind::document, 0).lines;
    // `help NAME` prints the summary, then the rest: the first line, then the others.
    std::string summary = lines.empty() ? std::string() : lines.front();
    std::string rest;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        rest += (i > 1 ? "\n" : "") + lines[i];
    }
    if (command* m = s.commands().find_mutable(full)) {
        m->summary = summary;
        m->help = rest;
    }
}

void cmd_if(session& s, std::string_view args, line_source* from) {
    std::string cond = trim_copy(args);
    if (cond.empty()) {
        error::send("if command requires an argument.");
    }
    (void)from;   // gdb prompts for the body the same way from any source
    // The whole block is read before anything runs, as gdb does: an error in the
    // condition leaves no body lines behind to be run as commands.
    command_block block = read_block(s, block_kind::if_block, 1);
    std::size_t split = block.else_at.value_or(block.lines.size());
    bool holds = condition_holds(s, cond);
    std::vector<std::string> branch(holds ? block.lines.begin() : block.lines.begin() + static_cast<long>(split),
                                    holds ? block.lines.begin() + static_cast<long>(split) : block.lines.end());
    run_lines(s, branch);
}

void cmd_while(session& s, std::string_view args, line_source* from) {
    std::string cond = trim_copy(args);
    if (cond.empty()) {
        error::send("while command requires an argument.");
    }
    (void)from;
    command_block block = read_block(s, block_kind::while_block, 1);
    script_state& st = s.script();
    take_interrupt_request();
    while (condition_holds(s, cond)) {
        if (take_interrupt_request()) {
            error::send("Quit");
        }
        ++st.loop_depth;
        try {
            run_lines(s, block.lines);
        } catch (...) {
            --st.loop_depth;
            st.jump = script_state::loop_jump::none;
            throw;
        }
        --st.loop_depth;
        auto jump = st.jump;
        st.jump = script_state::loop_jump::none;
        if (jump == script_state::loop_jump::break_loop || s.quit_requested()) {
            break;
        }
    }
}

/// `source [-v] [-s] FILE`: the file's commands, as gdb's script_from_file runs them: the
/// first error ends the file and is reported as "FILE:LINE: Error in sourced command file:".
void cmd_source(session& s, std::string_view args, line_source* from) {
    std::string a = trim_copy(args);
    bool verbose = false;
    while (a.rfind("-", 0) == 0) {
        auto sp = a.find_first_of(" \t");
        std::string opt = a.substr(0, sp);
        if (opt == "-v") {
            verbose = true;
        } else if (opt != "-s") {
            break;   // a file name that starts with '-'
        }
        a = sp == std::string::npos ? std::string() : trim_copy(std::string_view(a).substr(sp));
    }
    if (a.empty()) {
        error::send("source command requires file name of file to source.");
    }
    std::string path = a;
    if (path.rfind("~/", 0) == 0) {
        if (const char* home = std::getenv("HOME")) {
            path = std::string(home) + path.substr(1);
        }
    }
    std::unique_ptr<file_source> file;
    try {
        file = std::make_unique<file_source>(path);
    } catch (const std::exception& e) {
        // gdb: an error when typed at the terminal, a warning from scripts and batch mode.
        if (typed_at_terminal(s, from)) {
            error::send(std::string(e.what()) + ".");
        }
        s.out().error(fmt::format("warning: {}", e.what()));
        return;
    }
    script_state& st = s.script();
    struct restore {
        script_state& st;
        bool was;
        int base;
        ~restore() {
            st.trace_commands = was;
            st.trace_base = base;
        }
    } restore_tracing{st, st.trace_commands, st.trace_base};
    if (verbose && !st.trace_commands) {
        st.trace_commands = true;
        st.trace_base = st.body_depth;
    }
    try {
        run_body(s, *file);
    } catch (const std::exception& e) {
        error::send(fmt::format("{}: Error in sourced command file:\n{}", file->where(), e.what()));
    }
}

/// gdb's `uinteger` setting value: a number, 0 or "unlimited" for no limit.
unsigned parse_depth(std::string_view args) {
    std::string a = trim_copy(args);
    if (a.empty()) {
        error::send("Argument required (integer to set it to, or \"unlimited\").");
    }
    if (a == "unlimited") {
        return 0;
    }
    bool negative = a.front() == '-';
    std::string digits = negative ? a.substr(1) : a;
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        error::send(fmt::format("Invalid number \"{}\".", a));
    }
    if (negative || digits.size() > 10 || std::stoull(digits) > 0xffffffffULL) {
        error::send(fmt::format("integer {} out of range", a));
    }
    return static_cast<unsigned>(std::stoull(digits));
}

/// The handlers above want the source their command was read from (the terminal shows
/// hints); it is the innermost source when the handler starts.
command_handler with_source(void (*f)(session&, std::string_view, line_source*)) {
    return [f](session& s, std::string_view a) { f(s, a, s.current_source()); };
}

}  // namespace

void register_script_commands(command_table& t) {
    t.add({"define", {}, "Define a new command name.",
           "define NAME\nCOMMANDS...\nend\nThe commands run when NAME is typed; $arg0... $argN are its arguments and "
           "$argc their count.",
           with_source(cmd_define), false, nullptr});
    t.add({"define-prefix", {}, "Define or mark a command as a user-defined prefix command.",
           "define-prefix NAME...\nAfterwards `define NAME SUB` defines a subcommand of NAME.",
           [](session& s, std::string_view a) { cmd_define_prefix(s, a); }, false, nullptr});
    t.add({"document", {}, "Document a user-defined command.",
           "document NAME\nTEXT...\nend\nThe first line is what `help` lists; `help NAME` shows all of it.",
           with_source(cmd_document), false, nullptr});
    t.add({"if", {}, "Execute nested commands once IF the conditional expression is non zero.",
           "if EXPR\nCOMMANDS...\n[else\nCOMMANDS...]\nend", with_source(cmd_if), false, nullptr});
    t.add({"while", {}, "Execute nested commands WHILE the conditional expression is non zero.",
           "while EXPR\nCOMMANDS...\nend\nloop_break leaves the loop, loop_continue starts its next iteration.",
           with_source(cmd_while), false, nullptr});
    t.add({"source", {}, "Read commands from a file named FILE.",
           "source [-v] [-s] FILE\n-v shows each command before it runs (prefixed with +).", with_source(cmd_source),
           false, nullptr});
    t.add({"end", {}, "End a block of commands (define, document, commands, if, while).", "",
           [](session&, std::string_view) { error::send("This command cannot be used at the top level."); }, false,
           nullptr});
    // gdb's `set EXPR` when EXPR names no setting (`set $i = $i + 1`, `set x = 3`).
    if (command* set = t.find_mutable("set"); set != nullptr && !set->handler) {
        set->handler = [](session& s, std::string_view a) {
            std::string expr = trim_copy(a);
            if (expr.empty()) {
                error::send("Argument required (expression to compute).");
            }
            evaluate_here(s, expr);
            s.current_inferior().stacks.clear();   // frames change with a written $pc or $sp
        };
    }
    t.prefix("set").add({"max-user-call-depth", {}, "Set the max call depth for non-python/scheme user-defined commands.",
                         "set max-user-call-depth N|unlimited\nA user command nested deeper ends with an error.",
                         [](session& s, std::string_view a) { s.script().max_call_depth = parse_depth(a); }, false,
                         nullptr});
    auto& show = t.prefix("show");
    show.add({"max-user-call-depth", {}, "Show the max call depth for non-python/scheme user-defined commands.",
              "show max-user-call-depth",
              [](session& s, std::string_view) {
                  unsigned n = s.script().max_call_depth;
                  s.out().line(fmt::format("The max call depth for user-defined commands is {}.",
                                           n == 0 ? std::string("unlimited") : std::to_string(n)));
              },
              false, nullptr});
    show.add({"user", {}, "Show definitions of non-python/scheme user defined commands.",
              "show user [NAME]",
              [](session& s, std::string_view a) {
                  std::string name = trim_copy(a);
                  auto& all = s.script().user_commands;
                  if (!name.empty()) {
                      const command* c = s.commands().find(name);
                      if (c == nullptr || !s.script().user_commands.count(c->name)) {
                          error::send("Not a user command.");
                      }
                      show_user_command(s, c->name, *all.at(c->name));
                      s.out().line("");   // gdb ends each definition with an empty line
                      return;
                  }
                  for (const auto& [n, body] : all) {
                      show_user_command(s, n, *body);
                      s.out().line("");
                  }
              },
              false, nullptr});
}

}  // namespace ompdbg::app
