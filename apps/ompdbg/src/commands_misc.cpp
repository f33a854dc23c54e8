// help, echo.
#include <cctype>

#include <fmt/format.h>

#include "ompdbg/debugger/eval/printf_format.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "command_args.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

void list_table(session& s, const command_table& t, const std::string& prefix) {
    std::vector<const command*> sorted;
    for (auto& c : t.all()) {
        sorted.push_back(&c);
    }
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
    for (auto* c : sorted) {
        std::string names = prefix + c->name;
        for (auto& a : c->aliases) {
            names += ", " + prefix + a;
        }
        s.out().line(fmt::format("{} -- {}", names, c->summary));
    }
}

void cmd_help(session& s, std::string_view args) {
    auto a = trim_copy(args);
    if (a.empty()) {
        s.out().line("List of commands:");
        s.out().line("");
        list_table(s, s.commands(), "");
        s.out().line("");
        s.out().line("Type \"help\" followed by command name for full documentation.");
        s.out().line("Command name abbreviations are allowed if unambiguous.");
        return;
    }
    const command_table* table = &s.commands();
    const command* cmd = nullptr;
    std::string path;
    std::string_view rest = a;
    while (!rest.empty()) {
        auto sp = rest.find_first_of(" \t");
        std::string word(rest.substr(0, sp));
        rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
        while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) {
            rest.remove_prefix(1);
        }
        const command* next = table ? table->find(word) : nullptr;
        if (!next) {
            error::send(fmt::format("Undefined command: \"{}\".  Try \"help\".", path.empty() ? word : path + " " + word));
        }
        cmd = next;
        path += (path.empty() ? "" : " ") + cmd->name;
        table = cmd->subcommands.get();
    }
    if (!cmd->summary.empty()) {
        s.out().line(cmd->summary);
    }
    if (!cmd->help.empty()) {
        s.out().line(cmd->help);
    }
    if (!cmd->aliases.empty()) {
        std::string al;
        for (auto& x : cmd->aliases) {
            al += (al.empty() ? "" : ", ") + x;
        }
        s.out().line("Aliases: " + al);
    }
    if (cmd->subcommands) {
        s.out().line("");
        s.out().line(fmt::format("List of {} subcommands:", path));
        s.out().line("");
        list_table(s, *cmd->subcommands, path + " ");
    }
}

}  // namespace

void register_misc_commands(command_table& t) {
    t.add({"help", {"h"}, "Print list of commands.", "help [COMMAND]\nDescribes COMMAND, or lists every command.",
           cmd_help, false, nullptr});
    t.add({"echo", {}, "Print a constant string.", "echo TEXT\n\\n is a newline.",
           [](session& s, std::string_view a) {
               std::string text;
               for (std::size_t i = 0; i < a.size(); ++i) {
                   if (a[i] == '\\' && i + 1 < a.size()) {
                       char c = a[++i];
                       text += c == 'n' ? '\n' : c == 't' ? '\t' : c;
                   } else {
                       text += a[i];
                   }
               }
               s.out().partial(text);   // gdb's echo adds no newline of its own
           },
           false, nullptr});
    t.add({"printf", {}, "Formatted printing, like the C \"printf\" function.",
           "printf \"FORMAT\", ARG...\nFORMAT takes %d %i %u %o %x %X %c %s %f %e %g %a %p with flags, width,\n"
           "precision and the length modifiers h l ll L z j t; each ARG is an expression.",
           [](session& s, std::string_view a) {
               auto request = parse_printf(a);
               frame_context ctx = frame_context::for_selection(s);
               s.out().partial(format_printf(request, ctx));   // only the format's own newlines
           },
           false, nullptr});
}

}  // namespace ompdbg::app
