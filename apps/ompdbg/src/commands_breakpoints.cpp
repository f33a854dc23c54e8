// break, tbreak, delete, disable, enable, condition, ignore, commands, info breakpoints.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "command_args.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/eval/printf_format.hpp"
#include "commands_mpi.hpp"
#include "commands_signals.hpp"
#include "commands_watch.hpp"
#include "command_block.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/text.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app {

namespace {

/// gdb's from_tty: commands typed at the prompt, not those of --batch (-ex/-x) nor of a
/// breakpoint's `commands`. gdb prints some confirmations only then.
bool from_terminal(session& s) {
    return !s.is_batch() && !s.bp_commands_state().in_breakpoint_commands;
}

/// Splits "LOCATION if COND" at the `if` keyword.
std::pair<std::string, std::string> split_condition(std::string_view args) {
    std::string a(args);
    for (std::size_t i = 0; i + 2 <= a.size(); ++i) {
        bool start_ok = i == 0 || std::isspace(static_cast<unsigned char>(a[i - 1]));
        if (start_ok && a.compare(i, 2, "if") == 0 &&
            (i + 2 == a.size() || std::isspace(static_cast<unsigned char>(a[i + 2])) || a[i + 2] == '(')) {
            return {trim_copy(std::string_view(a).substr(0, i)), trim_copy(std::string_view(a).substr(i + 2))};
        }
    }
    return {trim_copy(a), {}};
}

/// Takes a trailing "thread N" off a breakpoint spec (gdb: `break LOCATION thread N [if
/// COND]`); N is gdb's thread number, checked against the live threads.
std::optional<pid_t> split_thread(session& s, std::string& spec) {
    auto clause = split_trailing_clause(spec, "thread");
    if (!clause) {
        return std::nullopt;
    }
    const std::string& number = clause->token;
    int n = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (ec != std::errc() || ptr != number.data() + number.size()) {
        error::send("Invalid thread ID: " + number);
    }
    auto tid = s.tid_of_thread_number(n);
    if (!tid) {
        error::send(fmt::format("Unknown thread {}.", n));
    }
    spec = clause->before;
    return tid;
}

std::string hex(std::uint64_t v) {
    return fmt::format("{:#x}", v);
}

/// `break`, `tbreak` and `dprintf` (whose printf line is `dprintf_command`). Returns the
/// new breakpoint's number.
int create_breakpoint(session& s, std::string_view args, bool temporary, std::string dprintf_command = {}) {
    auto [spec, cond] = split_condition(args);
    auto ranks = split_rank_clause(s, spec);   // `break LOC rank LIST [thread N]`, either order
    auto thread_tid = split_thread(s, spec);
    if (!ranks) {
        ranks = split_rank_clause(s, spec);
    }
    if (spec.empty()) {
        // gdb: a breakpoint at the selected frame's pc.
        auto& proc = s.require_process();
        auto& frames = s.stack(s.selected_tid());
        if (frames.empty()) {
            error::send("No default breakpoint address now.");
        }
        (void)proc;
        spec = hex(frames[static_cast<std::size_t>(std::max(0, s.selected_frame()))].pc());
        spec = "*" + spec;
    }
    breakpoint_request asked;
    asked.spec = spec;
    asked.condition = cond;
    asked.temporary = temporary;
    if (!dprintf_command.empty()) {
        asked.dprintf = true;
        asked.commands = {std::move(dprintf_command)};
    }
    asked.thread_tid = thread_tid;
    asked.ranks = ranks;
    std::string why;
    breakpoint bp = make_breakpoint(s, asked, why);
    const char* what = bp.dprintf ? "Dprintf" : temporary ? "Temporary breakpoint" : "Breakpoint";
    if (bp.pending) {
        // gdb's `set breakpoint pending`: auto asks, on makes it pending, off refuses.
        const auto pending = s.settings().breakpoint_pending;
        if (pending == false) {
            error::send(why);
        }
        if (pending && !s.out().is_json()) {
            s.out().error(why);   // gdb says why on stderr, then makes it pending
        }
        if (!pending) {
            s.out().line(why);
            if (!s.query(fmt::format("Make {} pending on future shared library load? ",
                                     bp.dprintf ? "dprintf" : "breakpoint"), true)) {
                error::send(why);
            }
        }
        bp.number = s.next_breakpoint_number();
        s.out().line(fmt::format("{} {} ({}) pending.", what, bp.number, spec));
        s.out().field("breakpoint", {{"number", bp.number}, {"pending", true}, {"spec", spec}});
        return add_breakpoint(s, std::move(bp));
    }
    bp.number = s.next_breakpoint_number();
    const auto& first = bp.locations.front();
    if (bp.locations.size() > 1) {
        s.out().line(fmt::format("{} {} at {}: {}. ({} locations)", what, bp.number, hex(first.address.addr()),
                                 spec, bp.locations.size()));
    } else if (!first.file.empty()) {
        s.out().line(fmt::format("{} {} at {}: file {}, line {}.", what, bp.number, hex(first.address.addr()),
                                 source_display_name(s, first.file), first.line));
    } else {
        s.out().line(fmt::format("{} {} at {}", what, bp.number, hex(first.address.addr())));
    }
    nlohmann::json jl = nlohmann::json::array();
    for (auto& l : bp.locations) {
        jl.push_back({{"address", hex(l.address.addr())}, {"function", l.function}, {"symbol", l.symbol},
                      {"file", l.file}, {"line", l.line}});
    }
    s.out().field("breakpoint", {{"number", bp.number}, {"spec", spec}, {"locations", jl}});
    return add_breakpoint(s, std::move(bp));   // plants its sites ("Cannot insert breakpoint N.")
}

/// gdb's `dprintf LOCATION,"FORMAT",ARG...`: a breakpoint whose hits print and go on.
void create_dprintf(session& s, std::string_view args) {
    // The location ends at the first comma outside parentheses (`f(int, int)` in C++).
    std::size_t comma = std::string_view::npos;
    int depth = 0;
    for (std::size_t i = 0; i < args.size() && comma == std::string_view::npos; ++i) {
        depth += args[i] == '(' ? 1 : args[i] == ')' ? -1 : 0;
        if (args[i] == ',' && depth == 0) {
            comma = i;
        }
    }
    std::string_view location = trim(args.substr(0, comma));
    std::string_view format = comma == std::string_view::npos ? std::string_view{} : trim(args.substr(comma + 1));
    if (location.empty() && s.process() == nullptr) {
        error::send("No default breakpoint address now.");
    }
    if (format.empty()) {
        error::send("Format string required");
    }
    parse_printf(format);   // a bad format is refused now rather than at every hit
    create_breakpoint(s, location, false, "printf " + std::string(format));
}

/// Parses "1 2 3" / "1-3" / "2.1" into (number, location index or -1) pairs.
std::vector<std::pair<int, int>> parse_numbers(session& s, std::string_view args) {
    std::vector<std::pair<int, int>> out;
    std::istringstream in{std::string(args)};
    std::string tok;
    while (in >> tok) {
        auto bad = [&] { error::send(fmt::format("Convenience variable must have integer value.\nBad breakpoint argument: '{}'", tok)); };
        try {
            auto dash = tok.find('-');
            auto dot = tok.find('.');
            if (dash != std::string::npos && dash > 0) {
                int a = std::stoi(tok.substr(0, dash));
                int b = std::stoi(tok.substr(dash + 1));
                for (int i = a; i <= b; ++i) {
                    out.emplace_back(i, -1);
                }
            } else if (dot != std::string::npos) {
                out.emplace_back(std::stoi(tok.substr(0, dot)), std::stoi(tok.substr(dot + 1)) - 1);
            } else {
                std::size_t used = 0;
                int n = std::stoi(tok, &used);
                if (used != tok.size()) {
                    bad();
                }
                out.emplace_back(n, -1);
            }
        } catch (const std::logic_error&) {
            bad();
        }
    }
    (void)s;
    return out;
}

void set_enabled(session& s, std::string_view args, bool enable) {
    auto a = trim_copy(args);
    if (a.rfind("once", 0) == 0 || a.rfind("delete", 0) == 0) {
        error::send("enable once/delete are not supported yet.");
    }
    if (a.empty()) {
        for (auto& [n, bp] : s.breakpoints()) {
            bp.enabled = enable;
        }
        for (auto& [n, w] : s.watchpoints()) {
            enable_watchpoint(s, n, enable);
        }
        for (auto& c : s.process_events().catchpoints) {
            c.enabled = enable;
        }
    } else {
        for (auto [n, loc] : parse_numbers(s, a)) {
            auto it = s.breakpoints().find(n);
            if (it == s.breakpoints().end() && loc < 0 && (enable_watchpoint(s, n, enable) || enable_catchpoint(s, n, enable))) {
                continue;
            }
            if (it == s.breakpoints().end()) {
                s.out().error(fmt::format("No breakpoint number {}.", n));
                continue;
            }
            if (loc >= 0) {
                if (static_cast<std::size_t>(loc) >= it->second.locations.size()) {
                    error::send(fmt::format("Bad breakpoint location number '{}'", loc + 1));
                }
                it->second.locations[static_cast<std::size_t>(loc)].enabled = enable;
            } else {
                it->second.enabled = enable;
            }
        }
    }
    sync_breakpoint_sites(s);
}

std::string location_what(session& s, const breakpoint_location& l) {
    if (!l.file.empty()) {
        // gdb's print_breakpoint_location: the symbol's print name, "geometry::area(int)".
        const std::string& name = l.symbol.empty() ? l.function : l.symbol;
        return fmt::format("in {} at {}:{}", name, source_display_name(s, l.file), l.line);
    }
    if (!l.function.empty()) {
        if (l.symbol_offset != 0) {
            return fmt::format("<{}+{}>", l.function, l.symbol_offset);
        }
        return fmt::format("<{}>", l.function);
    }
    return {};
}

void info_breakpoints(session& s, std::string_view args) {
    collect_fast_counters(s);   // hits the agent handled since the stop (a background poll)
    std::vector<int> only;
    for (auto [n, loc] : parse_numbers(s, args)) {
        only.push_back(n);
    }
    auto wanted = [&](int n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
    // Watchpoints and event catchpoints share the numbering (commands_watch/_signals).
    std::map<int, info_breakpoint_row> others;
    for (auto rows : {watchpoint_rows(s), catchpoint_rows(s)}) {
        for (auto& r : rows) {
            if (wanted(r.number)) {
                others[r.number] = std::move(r);
            }
        }
    }
    // gdb's column widths: Type at least 14, Address 18 when anything has an address (a
    // watchpoint has one while the process lives).
    std::size_t type_width = 14;
    bool addresses = !s.watchpoints().empty() && s.process() != nullptr && s.process()->is_alive();
    for (auto& [n, r] : others) {
        type_width = std::max(type_width, r.type.size());
    }
    std::set<int> numbers;
    for (auto& [n, bp] : s.breakpoints()) {
        if (wanted(n)) {
            numbers.insert(n);
            addresses = addresses || !bp.locations.empty();
        }
    }
    for (auto& [n, r] : others) {
        numbers.insert(n);
    }
    std::size_t addr_width = addresses ? 18 : 10;
    nlohmann::json list = nlohmann::json::array();
    if (!numbers.empty()) {
        s.out().line(fmt::format("Num     {:<{}} Disp Enb {:<{}} What", "Type", type_width, "Address", addr_width));
    }
    for (int n : numbers) {
        if (auto o = others.find(n); o != others.end()) {
            const auto& r = o->second;
            s.out().line(fmt::format("{:<7} {:<{}} keep {:<3} {:<{}} {}", n, r.type, type_width, r.enabled ? "y" : "n", "",
                                     addr_width, r.what));
            for (const auto& d : r.details) {
                s.out().line(d);
            }
            list.push_back(r.json);
            continue;
        }
        auto& bp = s.breakpoints()[n];
        std::string type = bp.dprintf ? "dprintf" : bp.catch_what.empty() ? "breakpoint" : "catchpoint";
        std::string head = fmt::format("{:<7} {:<{}} {:<4} {:<3} ", n, type, type_width, bp.temporary ? "del" : "keep",
                                       bp.enabled ? "y" : "n");
        if (bp.pending || bp.locations.empty()) {
            s.out().line(head + fmt::format("{:<{}} {}", "<PENDING>", addr_width, bp.spec));
        } else if (!bp.catch_what.empty()) {
            s.out().line(head + fmt::format("0x{:016x} {}", bp.locations.front().address.addr(), bp.catch_what));
        } else if (bp.locations.size() == 1) {
            auto& l = bp.locations.front();
            s.out().line(head + fmt::format("0x{:016x} {}", l.address.addr(), location_what(s, l)));
        } else {
            s.out().line(head + fmt::format("{:<18} ", "<MULTIPLE>"));
        }
        if (!bp.condition.empty()) {
            s.out().line("\tstop only if " + bp.condition + condition_path_note(s, bp));
        }
        if (bp.thread_tid) {
            s.out().line(fmt::format("\tstop only in thread {}", s.thread_number(*bp.thread_tid)));
        }
        if (!bp.ranks.empty()) {
            s.out().line(fmt::format("\tstop only in rank {}", format_rank_list(bp.ranks)));
        }
        if (bp.hit_count > 0) {
            s.out().line(fmt::format("\t{} already hit {} time{}", bp.dprintf ? "breakpoint" : type, bp.hit_count,
                                     bp.hit_count == 1 ? "" : "s"));
        }
        if (bp.ignore_count > 0) {
            // gdb's words (breakpoint.c print_one_breakpoint_location).
            s.out().line(fmt::format("\tignore next {} hits", bp.ignore_count));
        }
        if (auto note = print_path_note(s, bp); !note.empty()) {
            s.out().line(note);
        }
        if (counted_in_target(s, bp)) {
            s.out().line("\thits counted in the target");   // by the agent (fast_breakpoints.hpp)
        }
        for (const auto& line : rank_path_notes(s, bp)) {
            s.out().line(line);   // an MPI job: the path in each rank
        }
        for (auto& c : bp.commands) {
            s.out().line("        " + c);
        }
        if (bp.locations.size() > 1) {
            for (std::size_t i = 0; i < bp.locations.size(); ++i) {
                auto& l = bp.locations[i];
                s.out().line(fmt::format("{:<{}} {:<3} 0x{:016x} {}", fmt::format("{}.{}", n, i + 1), type_width + 13,
                                         l.enabled ? "y" : "n", l.address.addr(), location_what(s, l)));
            }
        }
        nlohmann::json jl = nlohmann::json::array();
        for (auto& l : bp.locations) {
            jl.push_back({{"address", hex(l.address.addr())}, {"function", l.function}, {"symbol", l.symbol},
                          {"file", l.file}, {"line", l.line}, {"enabled", l.enabled}});
        }
        list.push_back({{"number", n}, {"type", type}, {"temporary", bp.temporary}, {"enabled", bp.enabled},
                        {"pending", bp.pending}, {"spec", bp.spec}, {"condition", bp.condition}, {"hits", bp.hit_count},
                        {"locations", jl}});
        if (!bp.ranks.empty()) {
            list.back()["ranks"] = bp.ranks;
        }
    }
    if (numbers.empty()) {
        if (only.empty()) {
            s.out().line("No breakpoints or watchpoints.");
        } else {
            s.out().line(fmt::format("No breakpoint or watchpoint matching '{}'.", trim_copy(args)));
        }
    }
    s.out().field("breakpoints", list);
}

}  // namespace

void register_breakpoint_commands(command_table& t) {
    t.add({"break", {"b", "br", "bre", "brea"}, "Set breakpoint at specified location.",
           "break [LOCATION] [if CONDITION]\nLOCATION: FUNCTION, FILE:LINE, LINE or *ADDRESS.\n"
           "With no LOCATION, uses the current execution address of the selected stack frame.",
           [](session& s, std::string_view a) { create_breakpoint(s, a, false); }, false, nullptr});
    t.add({"dprintf", {}, "Set a dynamic printf at specified location.",
           "dprintf LOCATION,\"FORMAT\",ARG...\nAt each hit, print as `printf \"FORMAT\",ARG...` would in the "
           "thread that hit it, and go on.",
           create_dprintf, false, nullptr});
    t.add({"tbreak", {"tb"}, "Set a temporary breakpoint.",
           "tbreak [LOCATION] [if CONDITION]\nLike \"break\" except the breakpoint is only temporary: it is deleted when hit.",
           [](session& s, std::string_view a) { create_breakpoint(s, a, true); }, false, nullptr});
    t.add({"delete", {"d"}, "Delete all or some breakpoints.",
           "delete [BREAKPOINTNUM]...\nWith no argument, deletes all breakpoints.",
           [](session& s, std::string_view a) {
               auto args = trim_copy(a);
               if (args.rfind("breakpoints", 0) == 0) {
                   args = trim_copy(std::string_view(args).substr(11));
               }
               if (args.empty()) {
                   if (!s.breakpoints().empty() && !s.is_batch() && !s.query("Delete all breakpoints? ")) {
                       return;
                   }
                   s.breakpoints().clear();
                   delete_all_watchpoints(s);
                   delete_all_catchpoints(s);
               } else {
                   for (auto [n, loc] : parse_numbers(s, args)) {
                       if (!s.breakpoints().erase(n) && !delete_watchpoint(s, n) && !delete_catchpoint(s, n)) {
                           s.out().error(fmt::format("No breakpoint number {}.", n));
                       }
                   }
               }
               sync_breakpoint_sites(s);
           },
           false, nullptr});
    t.add({"disable", {"disa", "dis"}, "Disable all or some breakpoints.", "disable [BREAKPOINTNUM[.LOC]]...",
           [](session& s, std::string_view a) { set_enabled(s, a, false); }, false, nullptr});
    t.add({"enable", {"en"}, "Enable all or some breakpoints.", "enable [BREAKPOINTNUM[.LOC]]...",
           [](session& s, std::string_view a) { set_enabled(s, a, true); }, false, nullptr});
    t.add({"condition", {}, "Specify breakpoint number N to break only if COND is true.",
           "condition N COND\nWith no COND, the breakpoint becomes unconditional.",
           [](session& s, std::string_view a) {
               auto args = trim_copy(a);
               if (args.empty()) {
                   error::send("Argument required (breakpoint number).");
               }
               auto sp = args.find_first_of(" \t");
               std::string num = args.substr(0, sp);
               std::string cond = sp == std::string::npos ? "" : trim_copy(std::string_view(args).substr(sp));
               int n = 0;
               try {
                   n = std::stoi(num);
               } catch (const std::logic_error&) {
                   error::send(fmt::format("Bad breakpoint argument: '{}'", args));
               }
               set_breakpoint_condition(s, n, cond);   // the agent gets the new one
               if (cond.empty() && from_terminal(s)) {
                   s.out().line(fmt::format("Breakpoint {} now unconditional.", n));
               }
           },
           false, nullptr});
    t.add({"ignore", {}, "Set ignore-count of breakpoint number N to COUNT.", "ignore N COUNT",
           [](session& s, std::string_view a) {
               std::istringstream in{std::string(a)};
               int n = 0;
               long count = -1;
               if (!(in >> n)) {
                   error::send("Argument required (a breakpoint number).");
               }
               if (!(in >> count)) {
                   error::send("Second argument (specified ignore-count) is missing.");
               }
               auto it = s.breakpoints().find(n);
               if (it == s.breakpoints().end()) {
                   error::send(fmt::format("No breakpoint number {}.", n));
               }
               it->second.ignore_count = static_cast<int>(std::max(0L, count));
               if (count > 0) {
                   load_agent_on_demand(s);   // an attached process: the agent counts them
               }
               sync_fast_sites(s);   // the agent ignores them (and gets the new count)
               if (!from_terminal(s)) {
                   // gdb's set_ignore_count says nothing unless from_tty.
               } else if (count <= 0) {
                   s.out().line(fmt::format("Will stop next time breakpoint {} is reached.", n));
               } else if (count == 1) {
                   s.out().line(fmt::format("Will ignore next crossing of breakpoint {}.", n));
               } else {
                   s.out().line(fmt::format("Will ignore next {} crossings of breakpoint {}.", count, n));
               }
           },
           false, nullptr});
    t.add({"commands", {}, "Set commands to be executed when a breakpoint is hit.",
           "commands [N]\nCOMMAND...\nend\nWith no N, the last breakpoint set. A first line `silent` suppresses the\n"
           "stop report; `continue` resumes.",
           [](session& s, std::string_view a) {
               auto args = trim_copy(a);
               int n = 0;
               if (args.empty()) {
                   if (s.breakpoints().empty()) {
                       error::send("No breakpoints specified.");
                   }
                   n = s.breakpoints().rbegin()->first;
               } else {
                   try {
                       n = std::stoi(args);
                   } catch (const std::logic_error&) {
                       error::send(fmt::format("Bad breakpoint argument: '{}'", args));
                   }
               }
               auto it = s.breakpoints().find(n);
               if (it == s.breakpoints().end()) {
                   error::send(fmt::format("No breakpoint number {}.", n));
               }
               if (!s.is_batch() && s.current_source() != nullptr && s.current_source()->is_interactive()) {
                   s.out().line(fmt::format("Type commands for breakpoint(s) {}, one per line.", n));
                   s.out().line("End with a line saying just \"end\".");
               }
               std::vector<std::string> body = read_block(s, block_kind::commands, 0).lines;
               // Looked up again: reading the body cannot change the table, but be safe.
               if (auto again = s.breakpoints().find(n); again != s.breakpoints().end()) {
                   again->second.commands = std::move(body);
                   if (only_counts(again->second)) {
                       load_agent_on_demand(s);   // an attached process: the agent counts them
                   }
                   sync_fast_sites(s);   // `silent` + `continue`: counted in the agent
               }
           },
           false, nullptr});
    auto& info = t.prefix("info", {"i", "inf"}, "Generic command for showing things about the program being debugged.");
    info.add({"breakpoints", {"b", "br", "break"}, "Status of specified breakpoints (all if no argument).",
              "info breakpoints [N]...", info_breakpoints, false, nullptr});
}

}  // namespace ompdbg::app
