// Stepping by lines and instructions (run/stepping.hpp): the step's state and loop.

#include "ompdbg/debugger/run/stepping.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/unwinder.hpp"
#include "run/step_engine.hpp"

namespace ompdbg::debugger {
namespace step_engine {

code_pos locate(tracer::process& p, std::uint64_t pc) {
    code_pos c;
    // (module elves are attached by the session after launch and library events)
    c.module = p.module_at(virt_addr(pc));
    if (c.module) {
        c.bias = c.module->load_bias;
        c.file_pc = pc - c.bias;
        if (c.module->elf) {
            c.dbg = c.module->elf->debug();
        }
    }
    return c;
}

std::optional<dwarf::function> physical_function(const code_pos& c) {
    if (!c.dbg) {
        return std::nullopt;
    }
    auto chain = c.dbg->function_chain_at(c.file_pc);
    if (chain.empty()) {
        return std::nullopt;
    }
    return chain.back();
}

std::uint64_t frame_cfa(tracer::process& p, pid_t tid) {
    auto frames = tracer::backtrace(p, tid, 1);
    if (!frames.empty()) {
        return frames.front().cfa.addr();
    }
    return p.find_thread(tid)->regs().sp() + 8;
}

namespace {

bool function_contains(const std::optional<dwarf::function>& fn, const code_pos& c, std::uint64_t pc) {
    return fn && pc >= c.bias && fn->contains(pc - c.bias);
}

/// The function chain at `c` (innermost first); empty without DWARF.
std::vector<dwarf::function> chain_at(const code_pos& c) {
    if (!c.dbg) {
        return {};
    }
    try {
        return c.dbg->function_chain_at(c.file_pc);
    } catch (const ompdbg::error&) {
        return {};
    }
}

/// Index of the function instance `die` in `chain`, or -1.
int index_in_chain(const std::vector<dwarf::function>& chain, const void* die) {
    for (std::size_t i = 0; i < chain.size(); ++i) {
        if (chain[i].die.addr == die) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

bool same_file(const std::string& a, const std::string& b) {
    return a == b || std::filesystem::path(a).filename() == std::filesystem::path(b).filename();
}

/// True when `pc` is not plainly inside the stepping frame: it enters an inlined copy, is
/// inside a copy called from the stepping frame, or has left the stepping copy. A line's
/// range may span such code (it runs on over rows that are not statements).
bool at_inline_boundary(const step_state& st, tracer::process& p, std::uint64_t pc) {
    if (st.frame_die == nullptr) {
        return false;
    }
    auto chain = chain_at(locate(p, pc));
    if (chain.empty()) {
        return false;
    }
    int entered = inline_entries_at(chain, locate(p, pc).file_pc);
    return entered > 0 || index_in_chain(chain, st.frame_die) != 0;
}

}  // namespace

void set_range(step_state& st, tracer::process& p, std::uint64_t pc) {
    st.pos = locate(p, pc);
    st.fn = physical_function(st.pos);
    st.frame_die = nullptr;
    if (auto chain = chain_at(st.pos); !chain.empty()) {
        st.frame_die = chain[static_cast<std::size_t>(inline_entries_at(chain, st.pos.file_pc))].die.addr;
    }
    st.range.reset();
    st.line = 0;
    st.file.clear();
    if (st.pos.dbg) {
        if (auto r = st.pos.dbg->line_range_at(st.pos.file_pc)) {
            st.range = dwarf::addr_range{r->first + st.pos.bias, r->second + st.pos.bias};
        }
        if (auto le = st.pos.dbg->line_at(st.pos.file_pc)) {
            st.line = le->line;
            st.file = le->file;
        }
    }
}

namespace {

bool has_line_info(tracer::process& p, std::uint64_t pc) {
    auto c = locate(p, pc);
    return c.dbg && c.dbg->line_at(c.file_pc).has_value() && physical_function(c).has_value();
}

/// True when thread `tid` has just returned from a function called from the debugger and
/// abandoned at a stop (it stands at that call's return): the caller's registers come back
/// and the step ends without a word, as gdb pops its dummy frame and "silently stops".
bool returned_to_dummy_frame(session& s, pid_t tid) {
    return infcall::pop_abandoned_return(s, tid).has_value();
}

/// True when `c` is in a PLT stub of its module (.plt, .plt.sec, .plt.got).
bool in_plt(const code_pos& c) {
    if (!c.module || !c.module->elf) {
        return false;
    }
    for (std::string_view name : {".plt", ".plt.sec", ".plt.got"}) {
        auto sec = c.module->elf->section(name);
        if (sec && c.file_pc >= sec->addr && c.file_pc < sec->addr + sec->size) {
            return true;
        }
    }
    return false;
}

/// Whether `m` is the dynamic linker, whose lazy-binding resolver a PLT stub may jump to.
bool is_dynamic_linker(const tracer::loaded_module& m) {
    std::string name = m.path.filename().string();
    return name.starts_with("ld-linux") || name.starts_with("ld.so") ||
           (name.starts_with("ld-") && name.find(".so") != std::string::npos);
}

/// At most this many instructions are stepped through a PLT stub and the resolver (the
/// resolver's call of _dl_fixup runs at full speed; the rest is some 50 instructions).
constexpr int max_trampoline_steps = 20000;

/// gdb's `step` through the dynamic linker's trampolines (in_solib_dynsym_resolve_code,
/// glibc_skip_solib_resolver): a PLT stub, and the lazy-binding resolver it jumps to when
/// the symbol is not bound yet, are stepped an instruction at a time (the resolver's calls
/// run to their return) until the pc reaches the function they lead to: the bound target,
/// an ifunc's chosen implementation. Returns false when a stop for the user ended the step.
bool step_through_trampolines(step_context& cx, pid_t tid) {
    auto& p = cx.s.require_process();
    bool via_plt = false;
    for (int n = 0; n < max_trampoline_steps; ++n) {
        auto* t = p.find_thread(tid);
        if (!t) {
            return false;
        }
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        auto c = locate(p, prev_pc);
        bool in_resolver = false;
        if (in_plt(c)) {
            via_plt = true;
        } else if (via_plt && c.module && is_dynamic_linker(*c.module)) {
            in_resolver = true;
        } else {
            return true;
        }
        auto why = step_one_instruction(cx.s, tid);
        if (why.kind != tracer::stop_kind::single_step && !(why.kind == tracer::stop_kind::breakpoint && why.tid == tid)) {
            if (!cx.report.stop(why)) {
                continue;
            }
            return false;
        }
        t = p.find_thread(tid);
        if (!t) {
            return false;
        }
        std::uint64_t sp = t->regs().sp();
        if (in_resolver && sp == prev_sp - 8) {
            std::uint64_t ret = 0;
            try {
                ret = p.read<std::uint64_t>(virt_addr(sp));
            } catch (const std::exception&) {
            }
            if (ret > prev_pc && ret <= prev_pc + 16 && run_to_address(cx.s, cx.report, tid, ret, sp)) {
                return false;
            }
        }
    }
    return true;
}

/// Reports the end of a step at a new line: a breakpoint there is reported as its hit.
/// `hidden`: inlined copies entered at this pc that the stop does not show yet (gdb shows
/// the call site; the next `step` enters them).
void report_step_end(step_context& cx, pid_t tid, bool frame_changed, int hidden = 0) {
    session& s = cx.s;
    auto& p = s.require_process();
    std::uint64_t pc = p.find_thread(tid)->regs().pc();
    if (!breakpoints_at(s, pc).empty() && cx.report.breakpoint_hit(tid, pc)) {
        return;
    }
    set_hidden_inline_frames(s, tid, hidden);
    s.select_thread(tid);
    cx.report.step_ended(tid, frame_changed);
}

/// `until` in a function without line information. gdb's until_next_command steps the
/// range from the function's symbol to the pc over calls: one instruction on, or more when a
/// backward jump lands in that range (a loop), where `next` would run to the return.
bool until_without_lines(step_context& cx, pid_t tid, std::uint64_t pc, const code_pos& pos) {
    auto& p = cx.s.require_process();
    std::optional<dwarf::symbol> sym;
    if (pos.module && pos.module->elf) {
        sym = pos.module->elf->symbol_at(pos.file_pc);
    }
    if (!sym) {
        error::send("Execution is not within a known function.");
    }
    const std::uint64_t lo = pos.module->to_runtime(sym->value).addr();
    const std::uint64_t start_pc = pc;
    while (true) {
        auto* t = p.find_thread(tid);
        if (!t) {
            error::send("No thread selected.");
        }
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        auto why = step_one_instruction(cx.s, tid);
        if (why.kind != tracer::stop_kind::single_step) {
            if (!cx.report.stop(why)) {
                continue;   // a signal passed to the program: the step goes on
            }
            return false;
        }
        t = p.find_thread(tid);
        if (!t || returned_to_dummy_frame(cx.s, tid)) {
            return false;
        }
        pc = t->regs().pc();
        // A call's step onto a breakpoint at the callee's first byte is its hit (gdb's bpstat).
        if (!breakpoints_at(cx.s, pc).empty() && cx.report.breakpoint_hit(tid, pc)) {
            return false;
        }
        std::uint64_t sp = t->regs().sp();
        if (sp == prev_sp - 8) {
            std::uint64_t ret = p.read<std::uint64_t>(virt_addr(sp));
            if (ret > prev_pc && ret <= prev_pc + 16) {   // a call: run it to its return
                if (run_to_address(cx.s, cx.report, tid, ret, sp)) {
                    return false;
                }
                pc = ret;
            }
        }
        if (pc < lo || pc > start_pc) {
            break;
        }
    }
    auto after = locate(p, pc);
    std::optional<dwarf::symbol> sym_after;
    if (after.module == pos.module && after.module->elf) {
        sym_after = after.module->elf->symbol_at(after.file_pc);
    }
    report_step_end(cx, tid, !sym_after || sym_after->value != sym->value);   // a return: the caller's frame line
    return true;
}

/// One `next`/`step`/`until`. Returns true when it ended normally at a new line.
bool step_one_line(step_context& cx, step_mode mode) {
    session& s = cx.s;
    auto& p = s.require_process();
    pid_t tid = s.selected_tid();
    auto* thr = p.find_thread(tid);
    if (!thr) {
        error::send("No thread selected.");
    }
    std::uint64_t pc = thr->regs().pc();
    int hidden = hidden_inline_frames(s, tid);
    if (hidden > 0 && mode == step_mode::step) {
        // gdb's step_into_inline_frame: the stop showed the call site of inlined copies
        // that start here; `step` enters the outermost of them without running.
        set_hidden_inline_frames(s, tid, hidden - 1);
        s.select_thread(tid);
        cx.report.step_ended(tid, true);
        return true;
    }
    step_state st;
    set_range(st, p, pc);
    st.start_pc = pc;
    st.cfa = frame_cfa(p, tid);
    {
        auto chain = chain_at(st.pos);
        if (!chain.empty()) {
            std::size_t visible = std::min<std::size_t>(static_cast<std::size_t>(hidden), chain.size() - 1);
            st.frame_die = chain[visible].die.addr;
            if (visible > 0) {
                // Stopped at the call site of hidden copies: that is the line being stepped.
                st.line = chain[visible - 1].call_line;
                st.file = chain[visible - 1].call_file;
            }
        }
    }
    if (!st.range && mode == step_mode::until) {
        return until_without_lines(cx, tid, pc, st.pos);
    }
    if (!st.range) {
        // gdb: no line info here, so run until this function returns.
        std::string name = "??";
        if (st.pos.module && st.pos.module->elf) {
            if (auto sym = st.pos.module->elf->symbol_at(st.pos.file_pc)) {
                name = sym->name;
            }
        }
        cx.report.stepping_until_exit(name);
        std::uint64_t ret = p.read<std::uint64_t>(virt_addr(st.cfa - 8));
        if (run_to_address(cx.s, cx.report, tid, ret, st.cfa - 8) || returned_to_dummy_frame(s, tid)) {
            return false;
        }
        pc = p.find_thread(tid)->regs().pc();
        set_range(st, p, pc);
        st.cfa = frame_cfa(p, tid);
        st.frame_changed = true;
        st.line = -1;
        if (!st.range) {
            cx.report.run_on();
            return false;
        }
        if (auto le = st.pos.dbg->line_at(st.pos.file_pc); le && le->addr == st.pos.file_pc) {
            report_step_end(cx, tid, true);
            return true;
        }
    }
    return step_loop(cx, tid, mode, st);
}

}  // namespace

// The step's loop (step_engine.hpp): one instruction at a time, calls run over to their
// return unless `step` enters them, inlined copies as gdb's infrun treats them.
bool step_loop(step_context& cx, pid_t tid, step_mode mode, step_state& st) {
    auto& p = cx.s.require_process();
    std::uint64_t pc = 0;
    while (true) {
        auto* t = p.find_thread(tid);
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        auto why = step_one_instruction(cx.s, tid);
        if (why.kind != tracer::stop_kind::single_step) {
            if (why.kind == tracer::stop_kind::breakpoint && why.tid == tid) {
                // Landed on a user breakpoint by stepping: handled below as a new line.
            } else {
                if (!cx.report.stop(why)) {
                    continue;
                }
                return false;
            }
        }
        t = p.find_thread(tid);
        if (!t || returned_to_dummy_frame(cx.s, tid)) {
            return false;
        }
        pc = t->regs().pc();
        std::uint64_t sp = t->regs().sp();
        if (st.range && pc >= st.range->first && pc < st.range->second && !at_inline_boundary(st, p, pc)) {
            continue;
        }
        // Entered a call: the call pushed a return address just after the previous pc.
        if (sp == prev_sp - 8) {
            std::uint64_t ret = 0;
            try {
                ret = p.read<std::uint64_t>(virt_addr(sp));
            } catch (const std::exception&) {
            }
            if (ret > prev_pc && ret <= prev_pc + 16) {
                if (mode == step_mode::step) {
                    // A call through a PLT stub: `step` goes on to the function it leads to.
                    if (!step_through_trampolines(cx, tid)) {
                        return false;
                    }
                    pc = p.find_thread(tid)->regs().pc();
                }
                if (mode == step_mode::step && has_line_info(p, pc)) {
                    auto c = locate(p, pc);
                    auto fn = physical_function(c);
                    std::uint64_t bp = c.bias + (fn->breakpoint_pc ? fn->breakpoint_pc : fn->entry_pc);
                    if (pc != bp && function_contains(fn, c, bp)) {
                        if (run_to_address(cx.s, cx.report, tid, bp, 0)) {
                            return false;
                        }
                    }
                    report_step_end(cx, tid, true);
                    return true;
                }
                if (run_to_address(cx.s, cx.report, tid, ret, sp)) {
                    return false;
                }
                pc = ret;
                if (st.range && pc >= st.range->first && pc < st.range->second) {
                    continue;
                }
            }
        }
        if (!function_contains(st.fn, st.pos, pc)) {
            std::uint64_t cfa_now = frame_cfa(p, tid);
            bool returned = cfa_now > st.cfa;
            if (!has_line_info(p, pc)) {
                if (returned) {
                    // Back in a caller without line info (main returning into libc): run on.
                    cx.report.run_on();
                    return false;
                }
                // A jump into code without line info (PLT stub, tail call): run it to its
                // return.
                std::uint64_t ret = p.read<std::uint64_t>(virt_addr(sp));
                if (run_to_address(cx.s, cx.report, tid, ret, sp)) {
                    return false;
                }
                continue;
            }
            set_range(st, p, pc);
            st.cfa = cfa_now;
            st.frame_changed = true;
            auto le = st.pos.dbg->line_at(st.pos.file_pc);
            if (!returned || (le && le->addr == st.pos.file_pc && le->is_stmt)) {
                report_step_end(cx, tid, true);
                return true;
            }
            st.line = -1;   // the middle of the caller's line: finish it
            continue;
        }
        // A new line of the same function?
        code_pos c = locate(p, pc);
        auto le = c.dbg ? c.dbg->line_at(c.file_pc) : std::nullopt;
        if (!le) {
            continue;
        }
        bool row_start = le->addr == c.file_pc;
        bool new_line = le->line != st.line || !same_file(le->file, st.file);
        // Inlined copies, as gdb's infrun treats them: the copies entered at this pc are
        // hidden (the stop shows their call site), a copy called from the stepping frame
        // is stepped through by `next` and stops `step`, leaving the stepping copy is a
        // return into its caller.
        auto chain = chain_at(c);
        int entered = inline_entries_at(chain, c.file_pc);
        int at = index_in_chain(chain, st.frame_die);
        if (st.frame_die != nullptr && !chain.empty()) {
            if (at >= 0 && at == entered && entered > 0) {
                // Arrived at the entry of copies called from the stepping frame.
                const dwarf::function& call = chain[static_cast<std::size_t>(entered - 1)];
                bool same_call_line = call.call_line == st.line && same_file(call.call_file, st.file);
                if (mode == step_mode::step) {
                    if (same_call_line) {
                        report_step_end(cx, tid, true, entered - 1);   // into the outermost copy
                    } else {
                        report_step_end(cx, tid, st.frame_changed, entered);   // at the call site
                    }
                    return true;
                }
                if (same_call_line) {
                    continue;   // `next`: through the inlined call
                }
                report_step_end(cx, tid, st.frame_changed, entered);
                return true;
            }
            if (at > entered) {
                // Inside a copy called from the stepping frame (past its entry).
                if (mode == step_mode::step) {
                    report_step_end(cx, tid, true, entered);
                    return true;
                }
                continue;
            }
            if (at < 0 || at < entered) {
                // Out of the stepping copy, back in its caller (or another copy's entry).
                if (row_start && le->is_stmt && le->line != 0 && new_line) {
                    report_step_end(cx, tid, true, entered);
                    return true;
                }
                // The middle of the caller's line: it becomes the stepping frame (gdb
                // refreshes its step info), and the line is finished.
                std::uint64_t start = st.start_pc;
                std::uint64_t cfa = st.cfa;
                set_range(st, p, pc);
                st.start_pc = start;
                st.cfa = cfa;
                st.frame_changed = st.always_frame_line;
                st.frame_die = chain[static_cast<std::size_t>(entered)].die.addr;
                if (row_start) {
                    st.line = 0;   // not a statement: any statement after it ends the step
                }
                continue;
            }
        }
        bool backward = mode == step_mode::until && pc < st.start_pc;
        if (!backward && row_start && le->is_stmt && le->line != 0 && new_line) {
            report_step_end(cx, tid, st.frame_changed);
            return true;
        }
        if (row_start && !le->is_stmt) {
            // gdb: another line, but not the start of a statement, in the same frame: keep
            // stepping and keep the line being stepped.
            continue;
        }
        // The middle of a line, or the same line again: keep stepping through it.
        int keep_line = st.line;
        std::string keep_file = st.file;
        bool changed = st.frame_changed;
        std::uint64_t start = st.start_pc;
        std::uint64_t cfa = st.cfa;
        const void* die = st.frame_die;
        set_range(st, p, pc);
        st.frame_changed = changed;
        st.start_pc = start;
        st.cfa = cfa;
        st.frame_die = die;
        if (le->line == 0) {
            st.line = keep_line;
            st.file = keep_file;
        }
    }
}

}  // namespace step_engine

using namespace step_engine;

void step_lines(session& s, stop_reporter& report, step_mode mode, int count) {
    s.require_process();
    step_context cx{s, report};
    for (int i = 0; i < count; ++i) {
        if (!step_one_line(cx, mode)) {
            return;
        }
        if (!s.process()) {
            return;
        }
    }
}

void step_instructions(session& s, stop_reporter& report, bool over_calls, int count) {
    auto& p = s.require_process();
    step_context cx{s, report};
    pid_t tid = s.selected_tid();
    for (int i = 0; i < count; ++i) {
        auto* t = p.find_thread(tid);
        if (!t) {
            error::send("No thread selected.");
        }
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        auto before = locate(p, prev_pc);
        auto fn_before = physical_function(before);
        auto why = step_one_instruction(cx.s, tid);
        if (why.kind != tracer::stop_kind::single_step) {
            if (!cx.report.stop(why)) {
                --i;
                continue;
            }
            return;
        }
        t = p.find_thread(tid);
        if (!t || returned_to_dummy_frame(cx.s, tid)) {
            return;
        }
        std::uint64_t pc = t->regs().pc();
        std::uint64_t sp = t->regs().sp();
        if (over_calls && sp == prev_sp - 8) {
            std::uint64_t ret = p.read<std::uint64_t>(virt_addr(sp));
            if (ret > prev_pc && ret <= prev_pc + 16) {
                if (run_to_address(cx.s, cx.report, tid, ret, sp)) {
                    return;
                }
                pc = ret;
            }
        }
        if (i + 1 == count) {
            auto after = locate(p, pc);
            auto fn_after = physical_function(after);
            bool changed = !(fn_before && fn_after && fn_before->entry_pc == fn_after->entry_pc &&
                             before.module == after.module);
            report_step_end(cx, tid, changed);
        }
    }
}

}  // namespace ompdbg::debugger
