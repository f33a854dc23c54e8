// list [LINE | FUNCTION | FILE:LINE]: source lines around a location, continuing after the
// last lines printed.

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::app {

namespace {

struct list_state {
    std::string file;
    int next_line = 0;
};

list_state& last_list() {
    static list_state st;
    return st;
}

void print_lines(session& s, const std::string& file, int first, int last) {
    std::ifstream in(file);
    if (!in) {
        error::send(fmt::format("{}: No such file or directory.", file));
    }
    std::string text;
    int n = 0;
    int printed = 0;
    while (std::getline(in, text)) {
        ++n;
        if (n >= first && n <= last) {
            s.out().line(fmt::format("{}\t{}", n, text));
            ++printed;
        }
        if (n > last) {
            break;
        }
    }
    if (printed == 0) {
        error::send(fmt::format("Line number {} out of range; \"{}\" has {} lines.", first, file, n));
    }
    last_list() = list_state{file, last + 1};
}

// The file and line a `list` argument names: LINE (in the file listed last or the
// selected frame's), FILE:LINE, or FUNCTION (the line of its first statement).
std::pair<std::string, int> list_location(session& s, std::string_view spec, const list_state& st) {
    frame_context ctx = frame_context::for_selection(s);
    std::string file;
    int line = 0;
    std::size_t colon = spec.rfind(':');
    auto as_int = [](std::string_view t) -> std::optional<int> {
        int v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || p != t.data() + t.size()) {
            return std::nullopt;
        }
        return v;
    };
    if (auto n = as_int(spec)) {
        line = *n;
        if (!st.file.empty()) {
            file = st.file;
        } else if (ctx.has_frame() && ctx.frame()->line) {
            file = ctx.frame()->line->file;
        }
    } else if (colon != std::string_view::npos && as_int(spec.substr(colon + 1))) {
        std::string_view want = spec.substr(0, colon);
        line = *as_int(spec.substr(colon + 1));
        // Resolve the file through the line tables of the program and its libraries.
        std::vector<std::shared_ptr<dwarf::elf_file>> elves;
        if (tracer::target* tgt = s.target()) {
            for (const tracer::loaded_module& m : tgt->modules()) {
                if (m.elf) {
                    elves.push_back(m.elf);
                }
            }
        } else if (s.program()) {
            elves.push_back(s.elf_for(*s.program()));
        }
        for (auto& e : elves) {
            dwarf::debug_info* dbg = e->debug();
            if (dbg == nullptr) {
                continue;
            }
            for (const std::string& f : dbg->source_files()) {
                if (f == want || (f.size() > want.size() && f.compare(f.size() - want.size(), want.size(), want) == 0 &&
                                  f[f.size() - want.size() - 1] == '/')) {
                    file = f;
                    break;
                }
            }
            if (!file.empty()) {
                break;
            }
        }
        if (file.empty()) {
            error::send(fmt::format("No source file named {}.", want));
        }
    } else {
        auto fn = ctx.lookup_function(spec);
        if (!fn || !fn->address) {
            error::send(fmt::format("Function \"{}\" not defined.", spec));
        }
        module_view mv = module_for(s, *fn->address);
        dwarf::debug_info* dbg = mv.elf ? mv.elf->debug() : nullptr;
        auto le = dbg ? dbg->line_at(*fn->address - mv.bias) : std::nullopt;
        if (!le) {
            error::send(fmt::format("No line number known for {}.", spec));
        }
        file = le->file;
        line = le->line;
    }
    if (file.empty()) {
        error::send("No symbol table is loaded.  Use the \"file\" command.");
    }
    return {file, line};
}

}  // namespace

void cmd_list(session& s, std::string_view args) {
    std::string_view spec = trim(args);
    list_state& st = last_list();
    // gdb's `set listsize`: lines per list (0: unlimited), centred with half of them before.
    const int size = s.settings().listsize > 0 ? s.settings().listsize : INT_MAX / 2;
    const int before = size / 2;
    if (spec.empty()) {
        if (!st.file.empty()) {
            print_lines(s, st.file, st.next_line, st.next_line + size - 1);
            return;
        }
        frame_context ctx = frame_context::for_selection(s);
        if (ctx.has_frame() && ctx.frame()->line) {
            int center = ctx.frame()->line->line;
            int first = std::max(1, center - before);
            print_lines(s, ctx.frame()->line->file, first, first + size - 1);
            return;
        }
        spec = "main";
    }
    // gdb's "list FIRST,LAST", "list FIRST," (ten lines from FIRST), "list ,LAST" (ten
    // lines ending at LAST).
    if (auto comma = spec.find(','); comma != std::string_view::npos) {
        std::string_view a = trim(spec.substr(0, comma));
        std::string_view b = trim(spec.substr(comma + 1));
        if (!a.empty()) {
            auto [file, first] = list_location(s, a, st);
            int last = first + size - 1;
            if (!b.empty()) {
                last = list_location(s, b, list_state{file, 0}).second;
            }
            print_lines(s, file, first, last);
        } else if (!b.empty()) {
            auto [file, last] = list_location(s, b, st);
            print_lines(s, file, std::max(1, last - size + 1), last);
        }
        return;
    }
    auto [file, line] = list_location(s, spec, st);
    int first = std::max(1, line - before);
    print_lines(s, file, first, first + size - 1);
}

}  // namespace ompdbg::app
