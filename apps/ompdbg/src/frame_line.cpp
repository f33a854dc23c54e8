// gdb's frame lines (frame_line.hpp): the model's frames with the CLI's styles.

#include "frame_line.hpp"

#include <fstream>

#include <fmt/format.h>

#include "session.hpp"

namespace ompdbg::app {

namespace {

std::string frame_line_impl(session& s, const stack_frame& f, bool with_level, bool show_pc) {
    std::string out;
    if (with_level) {
        // gdb pads "#N" to four columns; the colour codes must not count in the padding.
        std::string level = fmt::format("#{}", f.level);
        out = s.out().styled(style::frame_level, level) + std::string(level.size() < 4 ? 4 - level.size() : 1, ' ');
    }
    if (f.is_dummy) {
        return out + "<function called from gdb>";
    }
    // gdb names every signal trampoline so, even one with a symbol (glibc's __restore_rt).
    if (f.physical.is_signal_frame && !f.function) {
        return out + "<signal handler called>";
    }
    if (show_pc) {
        out += s.out().styled(style::address, fmt::format("0x{:016x}", f.pc())) + " in ";
    }
    out += s.out().styled(style::function, frame_function_name(f));
    out += " (";
    out += format_frame_args(s, f);
    out += ")";
    if (f.function && f.line && f.line->line > 0 && !f.line->file.empty()) {
        out += fmt::format(" at {}:{}", s.out().styled(style::file, source_display_name(f.module, f.line->file)), f.line->line);
    } else if (f.module != nullptr && !f.module->is_executable) {
        out += fmt::format(" from {}", s.out().styled(style::file, f.module->path.string()));
    }
    return out;
}

}  // namespace

std::string format_frame_line(session& s, const stack_frame& f, bool with_level) {
    return frame_line_impl(s, f, with_level, frame_shows_pc(f));
}

std::optional<source_line> frame_source_line(session& s, const stack_frame& f) {
    if (!f.line || f.line->line <= 0 || f.line->file.empty()) {
        return std::nullopt;
    }
    auto& last = s.last_source();
    bool again = last.file == f.line->file && last.missing;
    std::ifstream in(f.line->file);
    last.file = f.line->file;
    last.missing = !in;
    if (!in) {
        std::string name = source_display_name(f.module, f.line->file);
        if (again) {
            return source_line{fmt::format("{}\tin {}", f.line->line, name)};
        }
        return source_line{fmt::format("{}\t{}: No such file or directory.", f.line->line, name), true};
    }
    std::string text;
    int n = 1;
    for (; std::getline(in, text); ++n) {
        if (n == f.line->line) {
            return source_line{fmt::format("{}\t{}", f.line->line, text)};
        }
    }
    return source_line{fmt::format("Line number {} out of range; \"{}\" has {} lines.", f.line->line,
                                   f.line->file, n - 1)};
}

}  // namespace ompdbg::app
