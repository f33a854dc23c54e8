#include "stepping.hpp"

#include <algorithm>
#include <cstring>

#include <dwarf.h>

#include <fmt/format.h>

#include "breakpoint_resolver.hpp"
#include "frame_context.hpp"
#include "run_control.hpp"
#include "stack.hpp"
#include "stop_printer.hpp"
#include "ompdbg/base/error.hpp"
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
};

void set_range(step_state& st, tracer::process& p, std::uint64_t pc) {
    st.pos = locate(p, pc);
    st.fn = physical_function(st.pos);
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
void report_step_end(session& s, pid_t tid, bool frame_changed) {
    auto& p = s.require_process();
    std::uint64_t pc = p.find_thread(tid)->regs().pc();
    if (!breakpoints_at(s, pc).empty() && report_breakpoint_hit(s, tid, pc)) {
        return;
    }
    s.select_thread(tid);
    print_location(s, tid, frame_changed);
}

/// One `next`/`step`/`until`. Returns true when it ended normally at a new line.
bool step_one_line(session& s, step_mode mode) {
    auto& p = s.require_process();
    pid_t tid = s.selected_tid();
    auto* thr = p.find_thread(tid);
    if (!thr) {
        error::send("No thread selected.");
    }
    std::uint64_t pc = thr->regs().pc();
    step_state st;
    set_range(st, p, pc);
    st.start_pc = pc;
    st.cfa = frame_cfa(p, tid);
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
        if (st.range && pc >= st.range->first && pc < st.range->second) {
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
        bool backward = mode == step_mode::until && pc < st.start_pc;
        if (!backward && le->addr == c.file_pc && le->is_stmt && le->line != 0 &&
            (le->line != st.line || le->file != st.file)) {
            report_step_end(s, tid, st.frame_changed);
            return true;
        }
        // The middle of a line, or the same line again: keep stepping through it.
        int keep_line = st.line;
        bool changed = st.frame_changed;
        std::uint64_t start = st.start_pc;
        std::uint64_t cfa = st.cfa;
        set_range(st, p, pc);
        st.frame_changed = changed;
        st.start_pc = start;
        st.cfa = cfa;
        if (le->line == 0) {
            st.line = keep_line;
        }
    }
}

/// SysV x86-64 classes of the (at most two) eightbytes of a small aggregate.
enum class arg_class { none, integer, sse };

/// Classifies `t` placed at `offset` into `classes` (the psABI's classification of
/// aggregates up to 16 bytes); false when the value is not returned in registers (long
/// double, unaligned fields: memory or x87).
bool classify(const dwarf::type& t, std::uint64_t offset, arg_class (&classes)[2]) {
    auto st = t.strip_cv_typedef();
    std::uint64_t size = st.size();
    switch (st.kind()) {
    case dwarf::type_kind::structure:
    case dwarf::type_kind::class_:
    case dwarf::type_kind::union_:
        for (const auto& m : st.members()) {
            if (m.is_static) {
                continue;
            }
            if (m.bit_size) {
                std::uint64_t word = (m.byte_offset + offset) / 8;
                if (word > 1) {
                    return false;
                }
                classes[word] = arg_class::integer;
                continue;
            }
            if (!classify(m.get_type(), offset + m.byte_offset, classes)) {
                return false;
            }
        }
        return true;
    case dwarf::type_kind::array: {
        auto elem = st.target();
        if (!elem) {
            return false;
        }
        std::uint64_t esize = elem->strip_cv_typedef().size();
        if (esize == 0) {
            return true;
        }
        for (std::uint64_t at = 0; at + esize <= size; at += esize) {
            if (!classify(*elem, offset + at, classes)) {
                return false;
            }
        }
        return true;
    }
    default:
        break;
    }
    if (size == 0) {
        return true;
    }
    if (offset % std::min<std::uint64_t>(size, 8) != 0 || offset + size > 16 || size > 8) {
        return false;   // unaligned, or long double / __int128 (not handled here)
    }
    std::uint64_t word = offset / 8;
    bool is_float = st.kind() == dwarf::type_kind::base && st.encoding() == dwarf::base_encoding::floating;
    if (!is_float) {
        classes[word] = arg_class::integer;
    } else if (classes[word] == arg_class::none) {
        classes[word] = arg_class::sse;
    }
    return true;
}

/// The bytes of a returned aggregate of at most 16 bytes, gathered from rax/rdx and
/// xmm0/xmm1 eightbyte by eightbyte as the psABI assigns them; nullopt when it is not
/// returned in registers.
std::optional<std::vector<std::byte>> small_aggregate_return(const dwarf::type& t, const tracer::registers& regs) {
    arg_class classes[2] = {arg_class::none, arg_class::none};
    if (!classify(t, 0, classes)) {
        return std::nullopt;
    }
    std::uint64_t ints[2] = {regs.gp().rax, regs.gp().rdx};
    const auto* xmm = regs.fp_regs().xmm_space;   // 4 words per register
    std::uint64_t sses[2];
    std::memcpy(&sses[0], xmm + 0, 8);
    std::memcpy(&sses[1], xmm + 4, 8);
    std::uint64_t words[2] = {0, 0};
    int next_int = 0, next_sse = 0;
    for (int w = 0; w < 2; ++w) {
        if (classes[w] == arg_class::sse) {
            words[w] = sses[next_sse++];
        } else if (classes[w] == arg_class::integer) {
            words[w] = ints[next_int++];
        }
    }
    std::vector<std::byte> bytes(t.size());
    std::memcpy(bytes.data(), words, std::min<std::size_t>(bytes.size(), sizeof words));
    return bytes;
}

/// gdb's "finish" out of an inlined frame: there is no return to run to, so step (over
/// calls) until the pc leaves the inlined copy's ranges or its physical frame returns, then
/// report the new location as a step does.
void finish_inlined(session& s, pid_t tid, const stack_frame& f) {
    auto& p = s.require_process();
    std::uint64_t bias = f.module ? f.module->load_bias : 0;
    std::uint64_t cfa = f.physical.cfa.addr();
    while (true) {
        auto* t = p.find_thread(tid);
        if (!t) {
            return;
        }
        std::uint64_t prev_pc = t->regs().pc();
        std::uint64_t prev_sp = t->regs().sp();
        if (prev_pc < bias || !f.function->contains(prev_pc - bias)) {
            break;
        }
        auto why = step_one_instruction(s, tid);
        if (why.kind != tracer::stop_kind::single_step &&
            !(why.kind == tracer::stop_kind::breakpoint && why.tid == tid)) {
            if (!report_stop(s, why)) {
                continue;
            }
            return;
        }
        t = p.find_thread(tid);
        if (!t) {
            return;
        }
        std::uint64_t sp = t->regs().sp();
        if (sp == prev_sp - 8) {
            std::uint64_t ret = 0;
            try {
                ret = p.read<std::uint64_t>(virt_addr(sp));
            } catch (const std::exception&) {
            }
            if (ret > prev_pc && ret <= prev_pc + 16 && run_to_address(s, tid, ret, sp)) {
                return;
            }
        }
        if (frame_cfa(p, tid) > cfa) {
            break;   // the physical frame returned (the copy ended the function)
        }
    }
    // Out of the copy in the middle of a caller's line (not at an is_stmt row): gdb then
    // finishes that line fragment, stepping until the pc leaves its line-table range.
    for (int guard = 0; guard < 10000; ++guard) {
        auto* t = p.find_thread(tid);
        if (!t) {
            return;
        }
        std::uint64_t pc = t->regs().pc();
        auto c = locate(p, pc);
        if (!c.dbg) {
            break;
        }
        auto le = c.dbg->line_at(c.file_pc);
        auto range = c.dbg->line_range_at(c.file_pc);
        if (!le || !range || (le->addr == c.file_pc && le->is_stmt)) {
            break;
        }
        std::uint64_t prev_sp = t->regs().sp();
        auto why = step_one_instruction(s, tid);
        if (why.kind != tracer::stop_kind::single_step &&
            !(why.kind == tracer::stop_kind::breakpoint && why.tid == tid)) {
            if (!report_stop(s, why)) {
                continue;
            }
            return;
        }
        t = p.find_thread(tid);
        if (!t) {
            return;
        }
        std::uint64_t now = t->regs().pc();
        if (t->regs().sp() == prev_sp - 8) {
            std::uint64_t ret = p.read<std::uint64_t>(virt_addr(t->regs().sp()));
            if (ret > pc && ret <= pc + 16) {
                if (run_to_address(s, tid, ret, t->regs().sp())) {
                    return;
                }
                now = ret;
            }
        }
        if (now < range->first + c.bias || now >= range->second + c.bias) {
            break;
        }
    }
    report_step_end(s, tid, true);
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
    if (f.is_inlined && (f.physical_index != 0 || f.inline_depth != 0 || !f.function)) {
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
    s.select_thread(tid);
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
    const auto& regs = thr->regs();
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
    std::string text = dwarf::format_value(v, ctx);
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
