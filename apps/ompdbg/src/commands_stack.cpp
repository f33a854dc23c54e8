// bt / where, frame, up, down, info frame, info locals, info args: gdb's stack commands.

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "ompdbg/debugger/stack/frame_args.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "omp_stack_view.hpp"
#include "session.hpp"
#include "ompdbg/debugger/stack/prologue_saves.hpp"
#include "ompdbg/debugger/stack/signal_frame.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/registers.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::app {

namespace {

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
            ++i;
        }
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t') {
            ++j;
        }
        if (j > i) {
            out.emplace_back(s.substr(i, j - i));
        }
        i = j;
    }
    return out;
}

std::optional<long> parse_int(std::string_view s) {
    long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// A count argument: an integer, or any expression of the language (gdb evaluates it).
long parse_count(session& s, std::string_view text) {
    if (auto v = parse_int(text)) {
        return *v;
    }
    frame_context ctx = frame_context::for_selection(s);
    return static_cast<long>(dwarf::as_integer(dwarf::evaluate(text, ctx)));
}

const std::vector<stack_frame>& require_stack(session& s) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        error::send("No stack.");
    }
    const std::vector<stack_frame>& st = s.stack(s.selected_tid());
    if (st.empty()) {
        error::send("No stack.");
    }
    return st;
}

/// "name = value" lines of a frame's locals or arguments; false when there is none.
bool print_variables(session& s, const stack_frame& f, bool parameters, const std::string& indent) {
    frame_context ctx(s, s.selected_tid(), f);
    bool any = false;
    std::vector<dwarf::variable> locals;
    if (parameters) {
        locals = ctx.frame_variables(false);
    }
    for (const dwarf::variable& v : ctx.frame_variables(parameters)) {
        any = true;
        std::string text;
        try {
            dwarf::value val = ctx.read_variable(value_source(v, locals));
            dwarf::format_options opts = s.settings().print;
            opts.top_level = false;   // gdb's info locals: "pp = 0x7ffe..." without a type prefix
            text = dwarf::format_value(val, ctx, opts);
        } catch (const ompdbg::error& e) {
            text = fmt::format("<error: {}>", e.what());
        }
        s.out().line(fmt::format("{}{} = {}", indent, v.name, text));
    }
    return any;
}

void print_frame_with_source(session& s, const stack_frame& f) {
    s.out().line(format_frame_line(s, f, true));
    if (f.function) {
        if (auto src = frame_source_line(s, f)) {
            if (src->is_error && !s.out().is_json()) {
                s.out().error(src->text);   // gdb's print_sys_errmsg
            } else {
                s.out().line(src->text);
            }
        }
    }
}

void cmd_backtrace(session& s, std::string_view args) {
    const std::vector<stack_frame>& st = require_stack(s);
    bool full = false;
    std::optional<long> limit;
    for (const std::string& w : words(args)) {
        if (w == "full" || w == "-full") {
            full = true;
        } else if (auto n = parse_int(w)) {
            limit = *n;
        } else {
            limit = parse_count(s, w);
        }
    }
    std::size_t begin = 0;
    std::size_t end = st.size();
    if (limit) {
        if (*limit >= 0) {
            end = std::min<std::size_t>(st.size(), static_cast<std::size_t>(*limit));
        } else {
            std::size_t n = static_cast<std::size_t>(-*limit);
            begin = st.size() > n ? st.size() - n : 0;
        }
    }
    nlohmann::json frames = nlohmann::json::array();
    for (std::size_t i = begin; i < end; ++i) {
        const stack_frame& f = st[i];
        s.out().line(format_frame_line(s, f, true));
        if (s.out().is_json()) {
            frames.push_back(frame_json(f));
        }
        if (full) {
            if (!f.function) {
                s.out().line("No symbol table info available.");
            } else if (!print_variables(s, f, false, "        ")) {
                s.out().line("No locals.");
            }
        }
    }
    s.out().field("frames", std::move(frames));
    // gdb prints this only for commands typed at a terminal, not in batch mode.
    if (!s.is_batch() && limit && *limit >= 0 && end < st.size()) {
        s.out().line("(More stack frames follow...)");
    }
}

void cmd_frame(session& s, std::string_view args) {
    const std::vector<stack_frame>& st = require_stack(s);
    std::vector<std::string> w = words(args);
    if (!w.empty() && w[0] == "level") {
        w.erase(w.begin());
    }
    if (!w.empty()) {
        long level = parse_count(s, w[0]);
        if (level < 0 || static_cast<std::size_t>(level) >= st.size()) {
            error::send(fmt::format("No frame at level {}.", w[0]));
        }
        s.select_frame(static_cast<int>(level));
    }
    print_frame_with_source(s, s.stack(s.selected_tid())[static_cast<std::size_t>(s.selected_frame())]);
}

void move_frame(session& s, std::string_view args, int direction) {
    const std::vector<stack_frame>& st = require_stack(s);
    long n = 1;
    if (!trim(args).empty()) {
        n = parse_count(s, trim(args));
    }
    long cur = s.selected_frame();
    long target = cur + direction * n;
    if (target >= static_cast<long>(st.size())) {
        if (cur == static_cast<long>(st.size()) - 1) {
            error::send("Initial frame selected; you cannot go up.");
        }
        target = static_cast<long>(st.size()) - 1;
    } else if (target < 0) {
        if (cur == 0) {
            error::send("Bottom (innermost) frame selected; you cannot go down.");
        }
        target = 0;
    }
    s.select_frame(static_cast<int>(target));
    print_frame_with_source(s, st[static_cast<std::size_t>(target)]);
}

std::string source_language(session& s, const stack_frame& f) {
    if (!f.function) {
        return "unknown";
    }
    if (frame_context(s, s.selected_tid(), f).language_cplus()) {
        return "c++";
    }
    if (f.function->linkage_name.rfind("_Z", 0) == 0 || f.function->name.find("::") != std::string::npos) {
        return "c++";
    }
    if (f.line) {
        const std::string& file = f.line->file;
        for (const char* ext : {".cpp", ".cc", ".cxx", ".C", ".hpp", ".hh", ".hxx"}) {
            std::string_view e(ext);
            if (file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0) {
                return "c++";
            }
        }
    }
    return "c";
}

void cmd_info_frame(session& s, std::string_view) {
    const std::vector<stack_frame>& st = require_stack(s);
    const std::size_t level = static_cast<std::size_t>(s.selected_frame());
    const stack_frame& f = st[level];
    tracer::target& tgt = *s.target();
    const std::uint64_t cfa = frame_address(tgt, f);

    s.out().line(fmt::format("Stack level {}, frame at 0x{:x}:", f.level, cfa));
    std::string rip = fmt::format(" rip = 0x{:x} in {}", f.pc(), frame_function_name(f));
    if (f.function && f.line && f.line->line > 0) {
        rip += fmt::format(" ({}:{})", source_display_name(f.module, f.line->file), f.line->line);
    }
    // The return address sits just below the CFA on x86-64.
    std::uint64_t saved_rip = 0;
    std::array<std::byte, 8> buf{};
    const std::uint64_t rip_slot = f.physical.is_signal_frame ? signal_frame_slots(f).rip_slot : cfa - 8;
    if (tgt.try_read_memory(virt_addr(rip_slot), buf) == buf.size()) {
        std::memcpy(&saved_rip, buf.data(), 8);
        rip += fmt::format("; saved rip = 0x{:x}", saved_rip);
    } else {
        rip += "; saved rip = <not saved>";
    }
    s.out().line(rip);

    std::vector<std::string> rel;
    if (f.is_inlined && level + 1 < st.size()) {
        rel.push_back(fmt::format("inlined into frame {}", level + 1));
    } else if (level + 1 < st.size()) {
        // The next outer physical frame.
        for (std::size_t k = level + 1; k < st.size(); ++k) {
            if (st[k].physical_index != f.physical_index) {
                rel.push_back(fmt::format("called by frame at 0x{:x}", frame_address(tgt, st[k])));
                break;
            }
        }
    }
    if (level > 0) {
        rel.push_back(fmt::format("caller of frame at 0x{:x}", frame_address(tgt, st[level - 1])));
    }
    if (!rel.empty()) {
        std::string l = " " + rel[0];
        for (std::size_t k = 1; k < rel.size(); ++k) {
            l += ", " + rel[k];
        }
        s.out().line(l);
    }
    if (f.function) {
        s.out().line(fmt::format(" source language {}.", source_language(s, f)));
    }
    if (f.is_inlined) {
        s.out().line(" Arglist at unknown address.");
        s.out().line(" Locals at unknown address, Previous frame's sp in rsp");
        return;
    }
    if (f.physical.is_signal_frame) {
        // The interrupted registers, saved by the kernel in the frame's sigcontext.
        sigcontext_slots slots = signal_frame_slots(f);
        s.out().line(" Arglist at unknown address.");
        s.out().line(fmt::format(" Locals at unknown address, Previous frame's sp at 0x{:x}", slots.sp_slot));
        std::string l;
        for (const auto& [name, addr] : slots.saved) {
            l += fmt::format("{}{} at 0x{:x}", l.empty() ? "  " : ", ", name, addr);
        }
        s.out().line(" Saved registers:");
        s.out().line(l);
        return;
    }
    frame_context ctx(s, s.selected_tid(), f);
    std::uint64_t base = cfa - 16;
    try {
        if (auto rbp = ctx.frame_registers().read("rbp"); rbp && *rbp < cfa && *rbp >= f.physical.sp.addr()) {
            base = *rbp;
        }
    } catch (const ompdbg::error&) {
    }
    s.out().line(fmt::format(" Arglist at 0x{:x}, args: {}", base, format_frame_args(s, f)));
    s.out().line(fmt::format(" Locals at 0x{:x}, Previous frame's sp is 0x{:x}", base, cfa));

    // Where this frame saved its caller's registers: the caller's recovered values found
    // in this frame's own stack area, and the return address at CFA-8.
    std::vector<std::string> saved;
    const stack_frame* caller = nullptr;
    for (std::size_t k = level + 1; k < st.size(); ++k) {
        if (st[k].physical_index != f.physical_index) {
            caller = &st[k];
            break;
        }
    }
    static constexpr std::pair<int, const char*> callee_saved[] = {{3, "rbx"}, {6, "rbp"}, {12, "r12"},
                                                                   {13, "r13"}, {14, "r14"}, {15, "r15"}};
    // The stack shown ends at main (backtrace past-main off); main's caller is unwound
    // here only to know the register values main's prologue saved.
    std::vector<tracer::frame> beyond;
    const std::vector<std::optional<std::uint64_t>>* caller_regs = caller ? &caller->physical.dwarf_regs : nullptr;
    if (caller_regs == nullptr && tgt.is_live()) {
        try {
            beyond = tracer::backtrace(tgt, s.selected_tid(), f.physical_index + 2);
        } catch (const std::exception&) {
            beyond.clear();
        }
        if (beyond.size() > f.physical_index + 1) {
            caller_regs = &beyond[f.physical_index + 1].dwarf_regs;
        }
    }
    // The prologue's pushes, read from the code (gdb reads the same from the CFI); the
    // scan below for code that saves registers otherwise.
    std::optional<std::vector<std::pair<std::string, std::uint64_t>>> pushed;
    if (f.function && f.module != nullptr) {
        pushed = prologue_saves(tgt, f.module->to_runtime(f.function->entry_pc).addr(), f.pc(), cfa);
        if (pushed && pushed->empty()) {
            pushed.reset();
        }
    }
    if (pushed) {
        static constexpr const char* gdb_order[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                                                    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
        for (const char* name : gdb_order) {
            for (const auto& [reg, addr] : *pushed) {
                if (reg == name) {
                    saved.push_back(fmt::format("{} at 0x{:x}", reg, addr));
                }
            }
        }
    } else if (caller_regs != nullptr) {
        const std::uint64_t lo = f.physical.sp.addr();
        const std::uint64_t hi = cfa - 8;
        std::vector<std::byte> area(hi > lo && hi - lo < 65536 ? hi - lo : 0);
        std::size_t got = area.empty() ? 0 : tgt.try_read_memory(virt_addr(lo), area);
        // Prologues push callee-saved registers in one run just below the return address
        // (gdb reads the CFI): scan down from there while the slots hold the caller's
        // values; a value further down that merely equals a register is a local.
        const auto& dregs = *caller_regs;
        std::vector<std::pair<std::size_t, std::uint64_t>> hits;   // (index in callee_saved, address)
        for (std::size_t off = (got / 8) * 8; off >= 8; off -= 8) {
            std::uint64_t v = 0;
            std::memcpy(&v, area.data() + off - 8, 8);
            bool matched = false;
            for (std::size_t i = 0; i < std::size(callee_saved) && !matched; ++i) {
                auto regno = static_cast<std::size_t>(callee_saved[i].first);
                bool taken = std::any_of(hits.begin(), hits.end(), [&](const auto& h) { return h.first == i; });
                if (!taken && regno < dregs.size() && dregs[regno] && *dregs[regno] == v) {
                    hits.emplace_back(i, lo + off - 8);
                    matched = true;
                }
            }
            if (!matched) {
                break;
            }
        }
        std::sort(hits.begin(), hits.end());
        std::vector<std::pair<std::uint64_t, std::string>> found;
        for (auto [i, addr] : hits) {
            found.emplace_back(addr, callee_saved[i].second);
        }
        for (auto& [addr, name] : found) {
            saved.push_back(fmt::format("{} at 0x{:x}", name, addr));
        }
    }
    saved.push_back(fmt::format("rip at 0x{:x}", cfa - 8));
    s.out().line(" Saved registers:");
    std::string l = "  " + saved[0];
    for (std::size_t k = 1; k < saved.size(); ++k) {
        l += ", " + saved[k];
    }
    s.out().line(l);
}

void info_vars(session& s, bool parameters) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        error::send("No frame selected.");
    }
    const std::vector<stack_frame>& st = s.stack(s.selected_tid());
    if (st.empty()) {
        error::send("No frame selected.");
    }
    const stack_frame& f = st[static_cast<std::size_t>(s.selected_frame())];
    if (!f.function) {
        s.out().line("No symbol table info available.");
        return;
    }
    if (!print_variables(s, f, parameters, "")) {
        s.out().line(parameters ? "No arguments." : "No locals.");
    }
}

}  // namespace

void register_stack_commands(command_table& t) {
    t.add(command{"backtrace", {"bt", "where"}, "Print backtrace of all stack frames.",
                  "backtrace [N] [full]\nPrint the stack of the selected thread; N innermost frames "
                  "(-N outermost); full prints local variables.",
                  cmd_backtrace, false, nullptr});
    t.add(command{"frame", {"f"}, "Select and print a stack frame.",
                  "frame [N]\nWithout argument, print the selected frame; with N, select frame N.",
                  cmd_frame, false, nullptr});
    t.add(command{"up", {}, "Select and print the stack frame that called this one.",
                  "up [N]\nSelect the frame N levels up (towards main).",
                  [](session& s, std::string_view a) { move_frame(s, a, +1); }, false, nullptr});
    t.add(command{"down", {"do"}, "Select and print the stack frame called by this one.",
                  "down [N]\nSelect the frame N levels down (towards the innermost).",
                  [](session& s, std::string_view a) { move_frame(s, a, -1); }, false, nullptr});

    command_table& info = t.prefix("info", {}, "Generic command for showing things about the program being debugged.");
    info.add(command{"frame", {"f"}, "All about the selected stack frame.",
                     "info frame\nPrint the selected frame's addresses, caller, arguments and saved registers.",
                     cmd_info_frame, false, nullptr});
    info.add(command{"locals", {}, "All local variables of current stack frame.",
                     "info locals\nPrint the local variables of the selected frame, innermost block first.",
                     [](session& s, std::string_view) { info_vars(s, false); }, false, nullptr});
    info.add(command{"args", {}, "All argument variables of current stack frame.",
                     "info args\nPrint the arguments of the selected frame.",
                     [](session& s, std::string_view) { info_vars(s, true); }, false, nullptr});
}

}  // namespace ompdbg::app
