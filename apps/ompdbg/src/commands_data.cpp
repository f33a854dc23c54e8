// print / call / output / ptype / whatis / set var: gdb's data commands, and the registration
// of those beside them: x (commands_memory.cpp), info registers (commands_registers.cpp),
// info sharedlibrary / symbol / address (commands_info_symbol.cpp), list (commands_list.cpp).

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

std::pair<std::string, std::string_view> split_format(std::string_view args) {
    args = trim(args);
    if (args.empty() || args[0] != '/') {
        return {{}, args};
    }
    std::size_t end = 1;
    while (end < args.size() && !std::isspace(static_cast<unsigned char>(args[end]))) {
        ++end;
    }
    return {std::string(args.substr(1, end - 1)), trim(args.substr(end))};
}

namespace {

dwarf::format_letter letter_of(char c) {
    switch (c) {
    case 'x': return dwarf::format_letter::hex;
    case 'z': return dwarf::format_letter::zero_hex;
    case 'd': return dwarf::format_letter::decimal;
    case 'u': return dwarf::format_letter::unsigned_;
    case 'o': return dwarf::format_letter::octal;
    case 't': return dwarf::format_letter::binary;
    case 'c': return dwarf::format_letter::char_;
    case 'a': return dwarf::format_letter::address;
    case 'f': return dwarf::format_letter::float_;
    case 's': return dwarf::format_letter::string;
    default: break;
    }
    error::send(fmt::format("Undefined output format \"{}\".", c));
}

dwarf::format_options print_options(session& s, const std::string& fmtspec) {
    dwarf::format_options opts = s.settings().print;
    for (char c : fmtspec) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            error::send("Item count other than 1 is meaningless in \"print\" command.");
        }
        if (c == 'b' || c == 'h' || c == 'w' || c == 'g') {
            error::send(fmt::format("Size letters are meaningless in \"print\" command."));
        }
        if (c == 'i') {
            error::send("Format letter \"i\" is meaningless in \"print\" command.");
        }
        opts.letter = letter_of(c);
    }
    return opts;
}

// `print` and `call` (which prints nothing for a void result, as gdb's call_command).
void print_value(session& s, std::string_view args, bool is_call) {
    auto [fmtspec, expr] = split_format(args);
    dwarf::format_options opts = print_options(s, fmtspec);
    frame_context ctx = frame_context::for_selection(s);
    dwarf::value v;
    if (expr.empty()) {
        auto last = s.history(0);
        if (!last) {
            // gdb with an empty history prints nothing useful; say what is missing.
            error::send("History is empty.");
        }
        v = *last;
    } else {
        v = dwarf::evaluate(expr, ctx);
    }
    if (is_call && v.val_type.is_void() && v.synthetic_type_name.empty()) {
        return;
    }
    std::string text = dwarf::format_value(v, ctx, opts);
    int n = s.record_value(v);
    s.out().line(fmt::format("${} = {}", n, text));
    s.out().field("history", n);
    s.out().field("value", text);
    s.out().field("type", v.synthetic_type_name.empty() ? v.val_type.name() : v.synthetic_type_name);
}

void cmd_print(session& s, std::string_view args) { print_value(s, args, false); }

void cmd_output(session& s, std::string_view args) {
    auto [fmtspec, expr] = split_format(args);
    dwarf::format_options opts = print_options(s, fmtspec);
    frame_context ctx = frame_context::for_selection(s);
    if (expr.empty()) {
        error::send("Argument required (expression to compute).");
    }
    dwarf::value v = dwarf::evaluate(expr, ctx);
    s.out().partial(dwarf::format_value(v, ctx, opts));   // gdb's output leaves the line open
}

void cmd_ptype_whatis(session& s, std::string_view args, bool ptype) {
    auto [fmtspec, expr] = split_format(args);
    (void)fmtspec;
    if (expr.empty()) {
        error::send("Argument required (one or more choice items).");
    }
    frame_context ctx = frame_context::for_selection(s);
    std::string text = ptype ? dwarf::ptype_command(expr, ctx) : dwarf::whatis_command(expr, ctx);
    for (std::size_t pos = 0; pos <= text.size();) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) {
            s.out().line(std::string_view(text).substr(pos));
            break;
        }
        s.out().line(std::string_view(text).substr(pos, nl - pos));
        pos = nl + 1;
    }
}

void cmd_set_var(session& s, std::string_view args) {
    std::string_view expr = trim(args);
    if (expr.empty()) {
        error::send("Argument required (expression to compute).");
    }
    {
        frame_context ctx = frame_context::for_selection(s);
        dwarf::evaluate(expr, ctx);
    }
    // A register or stack slot written ($pc, a saved register) changes the frames: they are
    // unwound again when next asked, as gdb reinitialises its frame cache.
    s.current_inferior().stacks.clear();
}

}  // namespace

void register_data_commands(command_table& t) {
    t.add(command{"print", {"p", "inspect"}, "Print value of expression EXP.",
                  "print[/FMT] EXP\nEvaluate EXP in the selected frame and print it as $N = value.\n"
                  "FMT is one of x d u o t c a f s.",
                  cmd_print, false, nullptr});
    t.add(command{"call", {}, "Call a function in the program.",
                  "call[/FMT] EXP\nEvaluate EXP, calling the program's functions in it, and print the value "
                  "unless it is void.",
                  [](session& s, std::string_view a) { print_value(s, a, true); }, false, nullptr});
    t.add(command{"output", {}, "Like \"print\" but don't put in value history and don't print newline.",
                  "output[/FMT] EXP", cmd_output, false, nullptr});
    t.add(command{"ptype", {}, "Print definition of type TYPE.",
                  "ptype EXP|TYPE\nPrint the full definition of a type or of an expression's type.",
                  [](session& s, std::string_view a) { cmd_ptype_whatis(s, a, true); }, false, nullptr});
    t.add(command{"whatis", {}, "Print data type of expression EXP.",
                  "whatis EXP|TYPE\nPrint the type of an expression (one typedef level for a type name).",
                  [](session& s, std::string_view a) { cmd_ptype_whatis(s, a, false); }, false, nullptr});
    t.add(command{"x", {}, "Examine memory: x/FMT ADDRESS.",
                  "x/NFU ADDRESS\nN count, F format (x d u o t a c f s i z), U unit (b h w g).\n"
                  "Without ADDRESS continues after the last address examined.",
                  cmd_x, true, nullptr});
    t.add(command{"list", {"l"}, "List specified function or line.",
                  "list [LINE | FUNCTION | FILE:LINE]\nPrint ten source lines around the location; "
                  "without argument continue after the last lines printed.",
                  cmd_list, true, nullptr});

    command_table& set = t.prefix("set", {}, "Evaluate expression EXP and assign result to variable VAR.");
    set.add(command{"variable", {"var"}, "Evaluate expression EXP and assign result to variable VAR.",
                    "set variable VAR = EXP", cmd_set_var, false, nullptr});

    command_table& info = t.prefix("info", {}, "Generic command for showing things about the program being debugged.");
    info.add(command{"registers", {"r"}, "List of integer registers and their contents.",
                     "info registers [REG...]\nPrint the general registers of the selected frame.",
                     cmd_info_registers, false, nullptr});
    info.add(command{"sharedlibrary", {"dll"}, "Status of loaded shared object libraries.",
                     "info sharedlibrary", cmd_info_sharedlibrary, false, nullptr});
    info.add(command{"symbol", {}, "Describe what symbol is at location ADDR.",
                     "info symbol ADDR", cmd_info_symbol, false, nullptr});
    info.add(command{"address", {}, "Describe where symbol SYM is stored.",
                     "info address SYM", cmd_info_address, false, nullptr});
}

}  // namespace ompdbg::app
