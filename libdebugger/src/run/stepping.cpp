#include "stepping.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <dwarf.h>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "run_control.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/call_abi.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::app {

namespace {

/// Where a run-time pc is: its module, DWARF and file address.
struct code_pos {
    const tracer::loaded_module* module = nullptr;
    dwarf::debug_info* dbg = nullptr;
    std::uint64_t file_pc = 0;
    std::uint64_t bias = 0;
};

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

/// The outermost (physical) function containing the pc, with run-time ranges.
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

bool function_contains(const std::optional<dwarf::function>& fn, const code_pos& c, std::uint64_t pc) {
    return fn && pc >= c.bias && fn->contains(pc - c.bias);
}

std::uint64_t frame_cfa(tracer::process& p, pid_t tid) {
    auto frames = tracer::backtrace(p, tid, 1);
    if (!frames.empty()) {
        return frames.front().cfa.addr();
    }
    return p.find_thread(tid)->regs().sp() + 8;
}

struct step_state {
    code_pos pos;                                    ///< of the function being stepped
    std::optional<dwarf::function> fn;
    std::optional<dwarf::addr_range> range;          ///< run-time
    int line = 0;
    std::string file;
    std::uint64_t cfa = 0;
    std::uint64_t start_pc = 0;
    bool frame_changed = false;
    /// `finish` out of an inlined copy: the stop always shows the frame line (gdb).
    bool always_frame_line = false;
    /// The function instance (DIE) of the frame being stepped: the innermost visible one,
    /// an inlined copy or the physical function (gdb's step frame id, within one frame).
    const void* frame_die = nullptr;
};

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

bool has_line_info(tracer::process& p, std::uint64_t pc) {
    auto c = locate(p, pc);
    return c.dbg && c.dbg->line_at(c.file_pc).has_value() && physical_function(c).has_value();
}

/// Reports the end of a step at a new line: a breakpoint there is reported as its hit.
/// `hidden`: inlined copies entered at this pc that the stop does not show yet (gdb shows
/// the call site; the next `step` enters them).
void report_step_end(session& s, pid_t tid, bool frame_changed, int hidden = 0) {
    auto& p = s.require_process();
    std::uint64_t pc = p.find_thread(tid)->regs().pc();
    if (!breakpoints_at(s, pc).empty() && report_breakpoint_hit(s, tid, pc)) {
        return;
    }
    set_hidden_inline_frames(s, tid, hidden);
    s.select_thread(tid);
    run_stop_hook(s);
    print_location(s, tid, frame_changed);
}

bool step_loop(session& s, pid_t tid, step_mode mode, step_state& st);

/// One `next`/`step`/`until`. Returns true when it ended normally at a new line.
bool step_one_line(session& s, step_mode mode) {
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
        run_stop_hook(s);
        print_location(s, tid, true);
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
    if (!st.range) {
        // gdb: no line info here, so run until this function returns.
        std::string name = "??";
        if (st.pos.module && st.pos.module->elf) {
            if (auto sym = st.pos.module->elf->symbol_at(st.pos.file_pc)) {
                name = sym->name;
            }
        }
        s.out().line(fmt::format("Single stepping until exit from function {},\nwhich has no line number information.", name));
        std::uint64_t ret = p.read<std::uint64_t>(virt_addr(st.cfa - 8));
        if (run_to_address(s, tid, ret, st.cfa - 8)) {
            return false;
        }
        pc = p.find_thread(tid)->regs().pc();
        set_range(st, p, pc);
        st.cfa = frame_cfa(p, tid);
        st.frame_changed = true;
        st.line = -1;
        if (!st.range) {
            continue_until_stop(s);
            return false;
        }
        if (auto le = st.pos.dbg->line_at(st.pos.file_pc); le && le->addr == st.pos.file_pc) {
            report_step_end(s, tid, true);
            return true;
        }
    }
    return step_loop(s, tid, mode, st);
}

/// Steps `tid` one instruction at a time (calls run to their return when they are not
/// entered) until the step described by `st` ends; reports where. Returns true when it
/// ended normally at a new line.
bool step_loop(session& s, pid_t tid, step_mode mode, step_state& st) {
    auto& p = s.require_process();
    std::uint64_t pc = 0;
    while (true) {
        auto* t = p.find_thread(tid);
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        auto why = step_one_instruction(s, tid);
        if (why.kind != tracer::stop_kind::single_step) {
            if (why.kind == tracer::stop_kind::breakpoint && why.tid == tid) {
                // Landed on a user breakpoint by stepping: handled below as a new line.
            } else {
                if (!report_stop(s, why)) {
                    continue;
                }
                return false;
            }
        }
        t = p.find_thread(tid);
        if (!t) {
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
                if (mode == step_mode::step && has_line_info(p, pc)) {
                    auto c = locate(p, pc);
                    auto fn = physical_function(c);
                    std::uint64_t bp = c.bias + (fn->breakpoint_pc ? fn->breakpoint_pc : fn->entry_pc);
                    if (pc != bp && function_contains(fn, c, bp)) {
                        if (run_to_address(s, tid, bp, 0)) {
                            return false;
                        }
                    }
                    report_step_end(s, tid, true);
                    return true;
                }
                if (run_to_address(s, tid, ret, sp)) {
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
                    continue_until_stop(s);
                    return false;
                }
                // A jump into code without line info (PLT stub, tail call): run it to its
                // return.
                std::uint64_t ret = p.read<std::uint64_t>(virt_addr(sp));
                if (run_to_address(s, tid, ret, sp)) {
                    return false;
                }
                continue;
            }
            set_range(st, p, pc);
            st.cfa = cfa_now;
            st.frame_changed = true;
            auto le = st.pos.dbg->line_at(st.pos.file_pc);
            if (!returned || (le && le->addr == st.pos.file_pc && le->is_stmt)) {
                report_step_end(s, tid, true);
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
                        report_step_end(s, tid, true, entered - 1);   // into the outermost copy
                    } else {
                        report_step_end(s, tid, st.frame_changed, entered);   // at the call site
                    }
                    return true;
                }
                if (same_call_line) {
                    continue;   // `next`: through the inlined call
                }
                report_step_end(s, tid, st.frame_changed, entered);
                return true;
            }
            if (at > entered) {
                // Inside a copy called from the stepping frame (past its entry).
                if (mode == step_mode::step) {
                    report_step_end(s, tid, true, entered);
                    return true;
                }
                continue;
            }
            if (at < 0 || at < entered) {
                // Out of the stepping copy, back in its caller (or another copy's entry).
                if (row_start && le->is_stmt && le->line != 0 && new_line) {
                    report_step_end(s, tid, true, entered);
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
            report_step_end(s, tid, st.frame_changed);
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

/// The bytes of a returned aggregate of at most 16 bytes, gathered from rax/rdx and
/// xmm0/xmm1 eightbyte by eightbyte as the psABI assigns them (dwarf/call_abi.hpp, shared
/// with function calls); nullopt when it is not returned in registers.
std::optional<std::vector<std::byte>> small_aggregate_return(const dwarf::type& t, const tracer::registers& regs) {
    dwarf::return_registers r;
    r.rax = regs.gp().rax;
    r.rdx = regs.gp().rdx;
    std::memcpy(r.xmm0.data(), regs.fp_regs().xmm_space, 16);
    std::memcpy(r.xmm1.data(), regs.fp_regs().xmm_space + 4, 16);
    return dwarf::returned_bytes(t, r);
}

/// gdb's "finish" out of an inlined frame (finish_command): there is no return to run to,
/// so it steps in the calling frame with an empty range and steps over calls: it stops as
/// soon as the pc is in no copy called from that frame (or at the call site of a next copy).
void finish_inlined(session& s, pid_t tid, const stack_frame& f) {
    auto& p = s.require_process();
    const auto& frames = s.stack(tid);
    std::size_t caller = static_cast<std::size_t>(f.level) + 1;
    if (caller >= frames.size() || !frames[caller].function || frames[caller].physical_index != f.physical_index) {
        error::send("\"finish\" not meaningful in the outermost frame.");
    }
    step_state st;
    std::uint64_t pc = p.find_thread(tid)->regs().pc();
    set_range(st, p, pc);
    st.range.reset();
    st.line = 0;
    st.file.clear();
    st.start_pc = pc;
    st.cfa = frame_cfa(p, tid);
    st.frame_changed = true;   // the stop shows the caller's frame line
    st.always_frame_line = true;
    st.frame_die = frames[caller].function->die.addr;
    step_loop(s, tid, step_mode::next, st);
}

}  // namespace

void step_lines(session& s, step_mode mode, int count) {
    s.require_process();
    for (int i = 0; i < count; ++i) {
        if (!step_one_line(s, mode)) {
            return;
        }
        if (!s.process()) {
            return;
        }
    }
}

void step_instructions(session& s, bool over_calls, int count) {
    auto& p = s.require_process();
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
        auto why = step_one_instruction(s, tid);
        if (why.kind != tracer::stop_kind::single_step) {
            if (!report_stop(s, why)) {
                --i;
                continue;
            }
            return;
        }
        t = p.find_thread(tid);
        std::uint64_t pc = t->regs().pc();
        std::uint64_t sp = t->regs().sp();
        if (over_calls && sp == prev_sp - 8) {
            std::uint64_t ret = p.read<std::uint64_t>(virt_addr(sp));
            if (ret > prev_pc && ret <= prev_pc + 16) {
                if (run_to_address(s, tid, ret, sp)) {
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
            report_step_end(s, tid, changed);
        }
    }
}

void finish_frame(session& s) {
    auto& p = s.require_process();
    pid_t tid = s.selected_tid();
    auto frames = s.stack(tid);   // a copy: the cache is dropped on resume
    auto level = static_cast<std::size_t>(std::max(0, s.selected_frame()));
    if (level >= frames.size()) {
        error::send("No stack.");
    }
    if (level + 1 >= frames.size()) {
        error::send("\"finish\" not meaningful in the outermost frame.");
    }
    const stack_frame& f = frames[level];
    if (f.is_inlined && (f.physical_index != 0 || f.level != 0 || !f.function)) {
        error::send("\"finish\" out of an inlined function in an outer frame is not supported.");
    }
    if (!s.is_batch()) {
        s.out().line("Run till exit from " + format_frame_line(s, f, true));
    }
    if (f.is_inlined) {
        finish_inlined(s, tid, f);
        return;
    }
    const stack_frame& caller = frames[level + 1];
    std::uint64_t ret = caller.pc();
    std::uint64_t cfa = f.physical.cfa.addr();
    if (run_to_address(s, tid, ret, cfa - 8)) {
        return;
    }
    // Out of a function called from the debugger and abandoned: its caller comes back.
    auto returned = debugger::infcall::pop_abandoned_return(s, tid);
    s.select_thread(tid);
    run_stop_hook(s);
    print_location(s, tid, true);
    // The returned value, from rax/rdx or xmm0 as the SysV ABI puts it.
    if (!f.function) {
        return;
    }
    Dwarf_Die die = f.function->die;
    Dwarf_Attribute attr;
    Dwarf_Die type_die;
    if (!dwarf_attr_integrate(&die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type_die)) {
        return;   // void
    }
    dwarf::type t(type_die);
    if (t.is_void()) {
        return;
    }
    auto* thr = p.find_thread(tid);
    const auto& regs = returned ? *returned : thr->regs();
    dwarf::value v;
    v.val_type = t;
    std::uint64_t size = t.size();
    auto stripped = t.strip_cv_typedef();
    if (stripped.is_aggregate() && size > 16) {
        v.address = regs.gp().rax;
        v.bytes.resize(size);
        p.read_memory(virt_addr(regs.gp().rax), v.bytes);
    } else if (stripped.kind() == dwarf::type_kind::base && stripped.encoding() == dwarf::base_encoding::floating &&
               size <= 16) {
        // floating point: xmm0
        v.bytes.resize(size);
        std::memcpy(v.bytes.data(), regs.fp_regs().xmm_space, size);
    } else if (stripped.is_aggregate()) {
        auto bytes = small_aggregate_return(t, regs);
        if (!bytes) {
            return;   // returned in memory or x87 registers we do not decode: gdb prints nothing
        }
        v.bytes = std::move(*bytes);
    } else {
        std::uint64_t words[2] = {regs.gp().rax, regs.gp().rdx};
        v.bytes.resize(std::min<std::uint64_t>(size, 16));
        std::memcpy(v.bytes.data(), words, v.bytes.size());
    }
    auto ctx = frame_context::for_selection(s);
    std::string text = dwarf::format_value(v, ctx, s.settings().print);
    int n = s.record_value(v);
    s.out().line(fmt::format("Value returned is ${} = {}", n, text));
    s.out().field("return_value", text);
}

void run_until_location(session& s, std::string_view location) {
    auto& p = s.require_process();
    pid_t tid = s.selected_tid();
    std::string why;
    auto locs = resolve_spec(s, std::string(location), why);
    if (locs.empty()) {
        error::send(why);
    }
    // Stop at the location, or when the current frame returns (gdb's until/advance).
    std::uint64_t cfa = frame_cfa(p, tid);
    std::uint64_t ret = p.read<std::uint64_t>(virt_addr(cfa - 8));
    std::vector<std::uint64_t> planted;
    for (auto& l : locs) {
        p.add_breakpoint_site(l.address);
        planted.push_back(l.address.addr());
    }
    p.add_breakpoint_site(virt_addr(ret));
    planted.push_back(ret);
    struct remover {
        session& s;
        std::vector<std::uint64_t>& addrs;
        ~remover() {
            if (auto* pr = s.process(); pr && pr->is_alive()) {
                for (auto a : addrs) {
                    try {
                        pr->remove_breakpoint_site(virt_addr(a));
                    } catch (const std::exception&) {
                    }
                }
            }
        }
    } cleanup{s, planted};
    while (true) {
        auto stop = resume_and_wait(s);
        if (stop.kind == tracer::stop_kind::breakpoint && stop.tid == tid) {
            std::uint64_t at = stop.breakpoint_addr ? stop.breakpoint_addr->addr() : 0;
            bool ours = at == ret ? p.find_thread(tid)->regs().sp() >= cfa
                                  : std::any_of(locs.begin(), locs.end(), [&](auto& l) { return l.address.addr() == at; });
            if (ours) {
                if (!breakpoints_at(s, at).empty() && report_breakpoint_hit(s, tid, at)) {
                    return;
                }
                s.select_thread(tid);
                run_stop_hook(s);
                print_location(s, tid, true);
                return;
            }
        }
        if (stop.kind == tracer::stop_kind::breakpoint) {
            std::uint64_t at = stop.breakpoint_addr ? stop.breakpoint_addr->addr() : 0;
            if (breakpoints_at(s, at).empty()) {
                continue;
            }
        }
        if (report_stop(s, stop)) {
            return;
        }
    }
}

}  // namespace ompdbg::app
