// dprintf lines formatted by the agent (fast_breakpoints.hpp): the record's format program
// and argument bytecode, and the ring of finished lines ompdbg drains while it waits for
// the program and at every stop.

#include "breakpoints/fast_agent.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"

#include "ompdbg/debugger/session/session.hpp"

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/eval/printf_format.hpp"
#include "ompdbg/dwarf/agent_expr.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace ompdbg::debugger {

namespace {

/// The agent's spelling of a conversion (agent_abi.h: flags, width, precision, the
/// operand's size, the letter), or empty when only the debugger prints it the same way.
/// `pointer`: the argument's type is a pointer; nullopt: not known yet (any type is
/// accepted, the spelling is checked again once the argument is compiled).
std::string agent_conversion(const printf_piece& p, std::optional<bool> pointer) {
    // Flags, then the width, then a precision: nothing else (no ' grouping, which reads
    // the locale), each at most a line wide.
    std::string_view text = p.text;
    std::size_t at = text.find_first_not_of("-+ #0");
    std::string_view flags = text.substr(0, std::min(at, text.size()));
    std::string_view rest = at == std::string_view::npos ? std::string_view{} : text.substr(at);
    std::size_t dot = rest.find('.');
    std::string_view width = rest.substr(0, dot);
    std::string_view precision = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
    auto digits = [](std::string_view d) {
        return d.size() <= 3 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               (d.empty() || std::stoul(std::string(d)) <= OMPDBG_AGENT_LINE_BYTES);
    };
    if (!digits(width) || !digits(precision)) {
        return {};
    }
    const bool only_left = flags.find_first_not_of('-') == std::string_view::npos;
    std::string size;   // the operand's width: 32 bits unless a length says 64 or 16
    if (p.length == "l" || p.length == "ll" || p.length == "z" || p.length == "j" || p.length == "t") {
        size = "L";
    } else if (p.length == "h") {
        size = "h";
    } else if (!p.length.empty()) {
        return {};
    }
    std::string letter;
    switch (p.conversion) {
    case 'd':
    case 'i':
        // '#' does nothing for %d in glibc, but C leaves it undefined: the debugger prints it.
        letter = flags.find('#') == std::string_view::npos ? "d" : "";
        break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
        letter = std::string(1, p.conversion);
        break;
    case 'c':
        // %lc is a wide character; flags other than '-' are undefined for %c, %s, %p.
        letter = only_left && size.empty() ? "c" : "";
        size.clear();
        break;
    case 's':
        letter = only_left && size.empty() && pointer != false ? "s" : "";
        break;
    case 'p':
        letter = only_left && precision.empty() && dot == std::string_view::npos && size.empty() ? "p" : "";
        break;
    default:   // f F e E g G a A: the agent has no floating point (its pads save no vector registers)
        return {};
    }
    if (letter.empty() || (pointer == true && letter != "s" && letter != "p")) {
        return {};
    }
    return "%" + std::string(text) + size + letter;
}

/// Lines are written at most this many bytes at a time: one write(2) of at most PIPE_BUF
/// bytes, so that the program's own output on the same pipe never lands inside a line.
constexpr std::size_t write_size = 4096;

/// Hands `text` (whole lines, at most write_size bytes) to the observer, which writes it in
/// one write of its own (session_observer::target_lines).
void write_whole(session& s, std::string& text) {
    if (text.empty()) {
        return;
    }
    s.observer().target_lines(text);
    text.clear();
}

}  // namespace

std::string compile_print(const breakpoint& bp, const dwarf::debug_info& info, std::uint64_t file_pc,
                          std::uint64_t bias, ompdbg_agent_site& rec) {
    if (bp.commands.size() != 1 || bp.commands.front().rfind("printf", 0) != 0) {
        return "commands other than the dprintf's printf";
    }
    printf_request req;
    try {
        req = debugger::parse_printf(std::string_view(bp.commands.front()).substr(6));
    } catch (const std::exception&) {
        return "a format the agent does not read";
    }
    if (req.expressions.size() > OMPDBG_AGENT_MAX_ARGS) {
        return "more arguments than the agent takes";
    }
    std::string format;
    std::uint32_t at = rec.code_len;
    std::size_t next = 0;
    for (const auto& p : req.pieces) {
        if (p.conversion == 0) {
            for (char c : p.text) {
                format += c;
                if (c == '%') {
                    format += '%';
                }
            }
            continue;
        }
        // The conversion first: a float's argument would be refused for its type anyway.
        const std::string what = "a conversion the agent does not format (%" + p.text + p.length + p.conversion + ")";
        if (agent_conversion(p, std::nullopt).empty()) {
            return what;
        }
        auto code = dwarf::compile_agent_condition(req.expressions[next], info, file_pc, bias);
        if (!code.ok()) {
            return "argument " + req.expressions[next] + ": " + code.reason;
        }
        std::string spelled = agent_conversion(p, code.pointer);
        if (spelled.empty()) {
            return what;
        }
        if (at + code.code.size() > OMPDBG_AGENT_SITE_CODE_BYTES) {
            return "arguments too long for the agent";
        }
        std::memcpy(rec.code + at, code.code.data(), code.code.size());
        rec.arg_at[next] = static_cast<std::uint16_t>(at);
        rec.arg_len[next] = static_cast<std::uint16_t>(code.code.size());
        at += static_cast<std::uint32_t>(code.code.size());
        format += spelled;
        ++next;
    }
    if (format.size() > OMPDBG_AGENT_FORMAT_BYTES) {
        return "a format too long for the agent";
    }
    std::memcpy(rec.format, format.data(), format.size());
    rec.format_len = static_cast<std::uint32_t>(format.size());
    rec.nargs = static_cast<std::uint32_t>(next);
    return "";
}

namespace {

/// One pass over the ring (see drain_fast_output); true when it stopped at a line a thread
/// is still writing.
bool drain_once(session& s, agent_state& a, tracer::process& proc) {
    proc.forget_cached_memory();
    std::uint64_t head = 0;
    if (proc.try_read_memory(virt_addr(a.ring + offsetof(ompdbg_agent_ring, head)),
                             std::as_writable_bytes(std::span(&head, 1))) != 8) {
        return false;
    }
    const std::uint64_t first = a.ring_tail;
    std::vector<ompdbg_agent_line> lines;
    std::string text;
    bool unfinished = false;
    while (a.ring_tail < head && !unfinished) {
        std::uint64_t slot = a.ring_tail % OMPDBG_AGENT_RING_LINES;
        std::uint64_t n = std::min<std::uint64_t>({head - a.ring_tail, OMPDBG_AGENT_RING_LINES - slot, 128});
        lines.resize(n);
        auto bytes = std::as_writable_bytes(std::span(lines));
        std::uint64_t from = a.ring + offsetof(ompdbg_agent_ring, lines) + slot * sizeof(ompdbg_agent_line);
        if (proc.try_read_memory(virt_addr(from), bytes) != bytes.size()) {
            break;
        }
        for (const auto& l : lines) {
            if (l.seq != a.ring_tail + 1 || l.len > OMPDBG_AGENT_LINE_BYTES) {
                unfinished = true;   // still being written: later lines wait for it
                break;
            }
            if (text.size() + l.len > write_size) {
                write_whole(s, text);
            }
            text.append(l.text, l.len);
            ++a.ring_tail;
        }
    }
    write_whole(s, text);
    if (a.ring_tail != first) {
        proc.write_memory(virt_addr(a.ring + offsetof(ompdbg_agent_ring, tail)), std::as_bytes(std::span(&a.ring_tail, 1)));
    }
    return unfinished;
}

}  // namespace

// Prints the finished lines of the ring, oldest first, up to the first one a thread is
// still writing; then gives the agent their slots back by advancing `tail`. The process may
// be running: its threads only ever publish lines, never change published ones. At a stop
// whose other threads still run, a line being written is waited for (briefly): the
// stopped thread's own line, printed next by ompdbg, must come after it.
bool drain_fast_output(session& s, bool at_stop) {
    auto* a = loaded_agent(s);
    if (a == nullptr || a->ring == 0 || !a->printing) {
        return false;
    }
    auto* proc = s.process();
    try {
        for (int tries = 0; drain_once(s, *a, *proc) && at_stop && proc->others_running() && tries < 200; ++tries) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "fast breakpoints: draining the agent's lines: {}", e.what());
    }
    return true;
}

tracer::stop_reason wait_draining_output(session& s, tracer::process& proc) {
    auto* a = loaded_agent(s);
    if (a == nullptr || !a->printing) {
        return proc.wait_for_stop();
    }
    for (;;) {
        // A few milliseconds: lines appear about as fast as the program makes them.
        if (auto why = proc.wait_for_stop(4)) {
            return *why;
        }
        drain_fast_output(s, false);
    }
}

}  // namespace ompdbg::debugger
