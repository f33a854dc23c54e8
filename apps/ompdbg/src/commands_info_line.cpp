// info line [LOCATION]: where the code of a source line starts and ends, as gdb 13 prints
// it (info_line_command): `Line L of "F" starts at address A <f+o> and ends at B <f+o>.`,
// `Line L of "F" is at address A <f+o> but contains no code.`, `Line number L is out of
// range for "F".`; LOCATION is FILE:LINE, LINE, FUNCTION or *ADDR.
#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

namespace {

/// The modules searched for a FILE:LINE (the live process' or the core's, else the program).
std::vector<module_view> all_modules(session& s) {
    std::vector<module_view> out;
    if (tracer::target* tgt = s.target()) {
        for (const auto& m : tgt->modules()) {
            if (m.elf) {
                out.push_back(module_view{m.elf, m.load_bias});
            }
        }
    } else if (s.program()) {
        auto m = s.static_executable();
        out.push_back(module_view{m.elf ? m.elf : s.elf_for(*s.program()), m.load_bias});
    }
    return out;
}

/// gdb's print_address: "0x401136 <main+4>", a C++ function with debug information by its
/// demangled physname ("<CalcElemVolume(double, double)+16>").
std::string addr_with_label(session& s, std::uint64_t a) {
    std::string l = value_symbol_label(s, a);
    return l.empty() ? fmt::format("0x{:x}", a) : fmt::format("0x{:x} <{}>", a, l);
}

/// `info line FILE:LINE` / `info line LINE`: gdb's find_line_pc_range for the line.
void info_file_line(session& s, const std::string& file, int line) {
    std::string known_file;   // the file's full name, when a module has it but not the line
    for (const module_view& mv : all_modules(s)) {
        dwarf::debug_info* dbg = mv.debug();
        if (dbg == nullptr) {
            continue;
        }
        auto first = dbg->line_start(file, line);
        if (!first) {
            // Does the module know the file at all (a line past its end)?
            for (const auto& f : dbg->source_files()) {
                std::string_view fv(f);
                if (known_file.empty() && (fv == file || (fv.size() > file.size() && fv.ends_with(file) &&
                                                           fv[fv.size() - file.size() - 1] == '/'))) {
                    known_file = f;
                }
            }
            continue;
        }
        const std::string shown = source_display_name(s, first->file);
        // gdb: when the row there belongs to another line, the asked line has no code of its own.
        auto span = dbg->gdb_line_span(first->addr);
        const std::uint64_t start = (span ? span->row.addr : first->addr) + mv.bias;
        if (!span || span->row.line != line) {
            s.out().line(fmt::format("Line {} of \"{}\" is at address {} but contains no code.", line, shown,
                                     addr_with_label(s, start)));
        } else {
            s.out().line(fmt::format("Line {} of \"{}\" starts at address {} and ends at {}.", line, shown,
                                     addr_with_label(s, start), addr_with_label(s, span->end + mv.bias)));
        }
        s.out().field("file", shown);
        s.out().field("line", line);
        s.out().field("address", fmt::format("0x{:x}", start));
        return;
    }
    if (!known_file.empty()) {
        s.out().line(fmt::format("Line number {} is out of range for \"{}\".", line, source_display_name(s, known_file)));
        return;
    }
    error::send(fmt::format("No source file named {}.", file));
}

void cmd_info_line(session& s, std::string_view args) {
    std::uint64_t addr = 0;
    std::string_view spec = trim(args);
    if (spec.empty()) {
        frame_context ctx = frame_context::for_selection(s);
        if (!ctx.has_frame()) {
            error::send("No line number information available.");
        }
        addr = ctx.frame()->physical.lookup_pc().addr();
        // gdb answers for the current source line, from its first statement row in the
        // unit (find_line_pc), not for the row at the pc.
        const stack_frame& f = *ctx.frame();
        if (f.line && f.line->line > 0) {
            module_view here = module_for(s, addr);
            dwarf::debug_info* d = here.debug();
            if (auto first = d ? d->first_row_of_line(addr - here.bias, f.line->file, f.line->line) : std::nullopt) {
                addr = first->addr + here.bias;
            }
        }
    } else if (spec[0] == '*') {
        frame_context ctx = frame_context::for_selection(s);
        addr = value_as_address(dwarf::evaluate(spec.substr(1), ctx));
    } else {
        parsed_spec p = parse_spec(std::string(spec));
        if (p.kind == spec_kind::file_line || p.kind == spec_kind::line) {
            std::string bound = bind_line_spec(s, std::string(spec));
            parsed_spec b = parse_spec(bound);
            if (b.kind != spec_kind::file_line) {
                error::send("No symbol table is loaded.  Use the \"file\" command.");
            }
            info_file_line(s, b.file, b.line);
            return;
        }
        // A function name: its line starts at the function's entry.
        frame_context ctx = frame_context::for_selection(s);
        auto fn = ctx.lookup_function(spec);
        if (!fn || !fn->address) {
            error::send(fmt::format("Function \"{}\" not defined.", spec));
        }
        addr = *fn->address;
    }
    module_view mv = module_for(s, addr);
    dwarf::debug_info* dbg = mv.debug();
    auto span = dbg ? dbg->gdb_line_span(addr - mv.bias) : std::nullopt;
    if (!span) {
        s.out().line(fmt::format("No line number information available for address {}", addr_with_label(s, addr)));
        return;
    }
    // gdb (find_pc_sect_line): the line-table row holding the address, up to the next row
    // at a higher address, whatever its line.
    const dwarf::line_entry* le = &span->row;
    std::uint64_t start = le->addr + mv.bias;
    std::uint64_t end = span->end + mv.bias;
    const std::string shown = source_display_name(s, le->file);
    s.out().line(fmt::format("Line {} of \"{}\" starts at address {} and ends at {}.", le->line, shown,
                             addr_with_label(s, start), addr_with_label(s, end)));
    s.out().field("file", shown);
    s.out().field("line", le->line);
    s.out().field("address", fmt::format("0x{:x}", start));
}

}  // namespace

void register_info_line_command(command_table& t) {
    command_table& info = t.prefix("info", {}, "Generic command for showing things about the program being debugged.");
    info.add(command{"line", {}, "Core addresses of the code for a source line.",
                     "info line [FILE:LINE | LINE | FUNCTION | *ADDR]\nWhere the code of the line starts and "
                     "ends; without an argument, the current line.",
                     cmd_info_line, false, nullptr});
}

}  // namespace ompdbg::app
