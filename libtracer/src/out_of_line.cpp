// Stepping over breakpoints out of line (see internal/out_of_line.hpp): one stop per hit
// instead of gdb's two (hit, then the single-step over the restored instruction).
//
// The scratch pages are mapped in the target by an injected mmap system call (the way rr
// and gdb's `call` inject code): on first need, near the code whose instructions they
// carry, so that rip-relative displacements still reach their data.

#include "internal/env_switch.hpp"
#include "internal/out_of_line.hpp"
#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/wait_status.hpp"
#include "internal/x86_decoder.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

namespace ompdbg::tracer {

using internal::ool_plan;
using internal::ool_slot_size;
using internal::try_ptrace;

namespace internal {

bool condition_holds(unsigned cc, std::uint64_t eflags) {
    const bool cf = eflags & (1u << 0), pf = eflags & (1u << 2), zf = eflags & (1u << 6),
               sf = eflags & (1u << 7), of = eflags & (1u << 11);
    bool holds = false;
    switch ((cc >> 1) & 7u) {   // the low bit negates
    case 0: holds = of; break;                      // o
    case 1: holds = cf; break;                      // b / c
    case 2: holds = zf; break;                      // e / z
    case 3: holds = cf || zf; break;                // be
    case 4: holds = sf; break;                      // s
    case 5: holds = pf; break;                      // p
    case 6: holds = sf != of; break;                // l
    case 7: holds = zf || sf != of; break;          // le
    }
    return (cc & 1u) ? !holds : holds;
}

ool_plan plan_out_of_line(std::span<const std::byte> bytes, std::uint64_t addr, std::uint64_t slot) {
    static x86_decoder dec;
    ool_plan plan;
    const auto* code = reinterpret_cast<const std::uint8_t*>(bytes.data());
    std::size_t size = bytes.size();
    std::uint64_t at = addr;
    if (!dec.next(code, size, at)) {
        return plan;
    }
    const cs_insn* insn = &dec.insn();
    plan.length = insn->size;
    const cs_x86& x = insn->detail->x86;
    auto in_group = [&](int g) { return dec.in_group(g); };
    bool imm_operand = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;

    if (in_group(CS_GRP_CALL)) {
        if (insn->id == X86_INS_CALL && imm_operand) {
            plan.how = ool_plan::kind::call;
            plan.target = static_cast<std::uint64_t>(x.operands[0].imm);
        }
        return plan;   // an indirect call would push the slot's address: step it in place
    }
    if (insn->id == X86_INS_JMP && imm_operand) {
        plan.how = ool_plan::kind::jump;
        plan.target = static_cast<std::uint64_t>(x.operands[0].imm);
        return plan;
    }
    if (in_group(CS_GRP_JUMP) && imm_operand) {
        // jcc rel8 (0x70-0x7f) or rel32 (0x0f 0x80-0x8f), after any prefix: the condition
        // is evaluated on the thread's flags. loop/jrcxz (which read or change rcx) step.
        const std::uint8_t* op = x.opcode;
        std::optional<unsigned> cc;
        if (op[0] >= 0x70 && op[0] <= 0x7f) {
            cc = op[0] & 0xfu;
        } else if (op[0] == 0x0f && op[1] >= 0x80 && op[1] <= 0x8f) {
            cc = op[1] & 0xfu;
        }
        if (cc) {
            plan.how = ool_plan::kind::conditional;
            plan.condition = *cc;
            plan.target = static_cast<std::uint64_t>(x.operands[0].imm);
        }
        return plan;
    }
    if (in_group(CS_GRP_BRANCH_RELATIVE) || in_group(CS_GRP_INT) || in_group(CS_GRP_IRET) ||
        in_group(CS_GRP_PRIVILEGE) || insn->id == X86_INS_XBEGIN || insn->id == X86_INS_XABORT ||
        insn->id == X86_INS_XEND) {
        // jcc/loop/jrcxz (a condition to evaluate), int3/int/syscall (the kernel reports
        // the slot's address), transactions: not worth moving.
        return plan;
    }
    std::vector<std::byte> out(bytes.begin(), bytes.begin() + static_cast<long>(plan.length));
    for (int i = 0; i < x.op_count; ++i) {
        const cs_x86_op& op = x.operands[i];
        if (op.type != X86_OP_MEM || op.mem.base != X86_REG_RIP) {
            continue;
        }
        // The displacement is relative to the end of the instruction, which moves by
        // (slot - addr); re-target it so that it still reaches the same data.
        plan.rip_relative = true;
        std::size_t off = x.encoding.disp_offset;
        if (x.encoding.disp_size != 4 || off == 0 || off + 4 > plan.length) {
            return plan;
        }
        std::int32_t disp;
        std::memcpy(&disp, out.data() + off, 4);
        if (disp != op.mem.disp) {
            return plan;   // capstone's offset does not point at the displacement
        }
        std::int64_t moved = static_cast<std::int64_t>(disp) + static_cast<std::int64_t>(addr - slot);
        if (moved < INT32_MIN || moved > INT32_MAX) {
            return plan;
        }
        std::int32_t d32 = static_cast<std::int32_t>(moved);
        std::memcpy(out.data() + off, &d32, 4);
    }
    // jmp *0(%rip) ; .quad addr+length — absolute, so the slot may be anywhere.
    for (std::uint8_t b : {0xff, 0x25, 0x00, 0x00, 0x00, 0x00}) {
        out.push_back(static_cast<std::byte>(b));
    }
    append_le(out, addr + plan.length, 8);
    plan.how = ool_plan::kind::execute;
    plan.code = std::move(out);
    return plan;
}

}  // namespace internal

namespace {

/// OMPDBG_STEP_OVER=single-step turns the scheme off (for comparisons and as an escape
/// hatch); anything else leaves it on.
bool out_of_line_enabled() {
    static const bool on = internal::env_switch_on("OMPDBG_STEP_OVER", "single-step");
    return on;
}

constexpr std::uint64_t page_size = 4096;

}  // namespace

std::optional<std::uint64_t> ptrace_process::impl::inject_mmap(thread_record& t, std::uint64_t hint,
                                                               std::uint64_t length) {
    // Run `syscall` at the thread's pc with mmap's arguments, then put everything back:
    // the two code bytes and every register. The thread stands on a breakpoint site (not in
    // a system call), so no restart logic applies; orig_rax = -1 says so to the kernel.
    pid_t tid = t.tid_;
    user_regs_struct saved{};
    if (!try_ptrace(PTRACE_GETREGS, tid, nullptr, &saved)) {
        return std::nullopt;
    }
    std::array<std::byte, 2> orig{};
    if (raw_read(saved.rip, orig) != orig.size()) {
        return std::nullopt;
    }
    const std::array<std::byte, 2> syscall_insn{std::byte{0x0f}, std::byte{0x05}};
    if (!raw_write(saved.rip, syscall_insn)) {
        return std::nullopt;
    }
    user_regs_struct regs = saved;
    regs.rax = SYS_mmap;
    regs.orig_rax = static_cast<unsigned long long>(-1);
    regs.rdi = hint;
    regs.rsi = length;
    regs.rdx = PROT_READ | PROT_EXEC;
    regs.r10 = MAP_PRIVATE | MAP_ANONYMOUS | (hint != 0 ? MAP_FIXED_NOREPLACE : 0);
    regs.r8 = static_cast<unsigned long long>(-1);
    regs.r9 = 0;
    std::optional<std::uint64_t> result;
    if (try_ptrace(PTRACE_SETREGS, tid, nullptr, &regs)) {
        for (int attempt = 0; attempt < 8; ++attempt) {
            if (!try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr)) {
                break;
            }
            int status = 0;
            if (internal::wait_tid(tid, &status, 0) != tid) {
                break;
            }
            if (!WIFSTOPPED(status)) {
                // The thread (or the process) ended meanwhile: let the loop see it.
                raw_write(saved.rip, orig);
                handle_status(t, internal::wait_status(status));
                return std::nullopt;
            }
            int sig = WSTOPSIG(status);
            if (sig == SIGTRAP) {
                user_regs_struct after{};
                if (try_ptrace(PTRACE_GETREGS, tid, nullptr, &after) && after.rip == saved.rip + 2) {
                    result = after.rax;
                }
                break;
            }
            // A signal arrived before the step: keep it for the next resume, step again.
            if (status >> 16 == 0 && t.pending_signal == 0 && sig != SIGSTOP) {
                t.pending_signal = sig;
            }
        }
    }
    raw_write(saved.rip, orig);
    try_ptrace(PTRACE_SETREGS, tid, nullptr, &saved);
    t.forget_regs();
    if (!result || (static_cast<std::int64_t>(*result) < 0 && static_cast<std::int64_t>(*result) > -4096)) {
        log::write(log::channel::ptrace, "out-of-line: mmap near {:#x} failed", hint);
        return std::nullopt;
    }
    return result;
}

std::optional<std::uint64_t> ptrace_process::impl::alloc_slot(thread_record& t, std::uint64_t near, bool need_near) {
    constexpr std::uint64_t reach = 1ull << 30;   // well inside rel32's +-2 GiB
    auto near_enough = [&](std::uint64_t base) {
        return !need_near || (base > near ? base - near : near - base) < reach;
    };
    for (auto& [base, used] : ool_pages) {
        if (near_enough(base) && used + ool_slot_size <= page_size) {
            std::uint64_t slot = base + used;
            used += ool_slot_size;
            return slot;
        }
    }
    auto page = map_scratch_page(t, near, need_near ? reach : 0);
    if (!page) {
        return std::nullopt;
    }
    log::write(log::channel::ptrace, "out-of-line: scratch page {:#x} for code near {:#x}", *page, near);
    ool_pages.emplace_back(*page, ool_slot_size);
    return *page;
}

// The pages below the executable are mapped several at a time: a run's out-of-line slots
// and jump pads then cost one injected system call (a register save, a step and a restore)
// and one read of /proc/PID/maps, where each page took its own.
constexpr std::uint64_t scratch_pages_per_mapping = 16;

std::optional<std::uint64_t> ptrace_process::impl::map_scratch_page(thread_record& t, std::uint64_t near,
                                                                    std::uint64_t reach) {
    auto within_reach = [&](std::uint64_t page) {
        return reach == 0 || (page > near ? page - near : near - page) < reach;
    };
    if (scratch_reserve_high > scratch_reserve_low && within_reach(scratch_reserve_high - page_size)) {
        scratch_reserve_high -= page_size;
        return scratch_reserve_high;
    }
    // New pages go right below the executable's lowest mapping: the kernel's top-down
    // mmap allocator and brk never reach there, so the program's own mappings (libraries,
    // thread stacks, malloc arenas) land exactly where they would without us — a page
    // among the libraries would shift every later one (and differ from gdb's addresses).
    std::uint64_t hint = 0;
    for (const auto& m : internal::read_maps(pid)) {
        if (m.path == exe_path.string() && (hint == 0 || m.start < hint)) {
            hint = m.start;
        }
    }
    for (const auto& [base, used] : ool_pages) {
        hint = std::min(hint, base);
    }
    if (scratch_reserve_low != 0) {
        hint = std::min(hint, scratch_reserve_low);
    }
    const std::uint64_t length = scratch_pages_per_mapping * page_size;
    if (hint < 0x10000 + length) {
        return std::nullopt;
    }
    hint -= length;
    if (!within_reach(hint + length - page_size)) {
        return std::nullopt;
    }
    auto mapped = inject_mmap(t, hint, length);
    if (!mapped || *mapped != hint) {
        return std::nullopt;
    }
    scratch_reserve_low = hint;
    scratch_reserve_high = hint + length - page_size;   // the top page is handed out now
    return scratch_reserve_high;
}

bool ptrace_process::impl::step_over_out_of_line(thread_record& t, breakpoint_site& s) {
    if (!out_of_line_enabled() || ool_disabled || vfork_pending) {
        ++counts.single_stepped;
        return false;
    }
    std::uint64_t addr = s.address().addr();
    auto it = ool_sites.find(addr);
    if (it == ool_sites.end()) {
        // Decide once per site: the original instruction (int3 hidden), a slot near it.
        std::array<std::byte, 15> code{};
        std::size_t n = raw_read(addr, code);
        if (n == 0) {
            ++counts.single_stepped;
            return false;
        }
        code[0] = s.saved_byte();
        for (auto& [a, other] : sites) {
            if (a > addr && a < addr + n && other->is_enabled()) {
                code[a - addr] = other->saved_byte();
            }
        }
        ool_site entry;
        // First as if the slot were at the site itself (what kind of plan, any slot near
        // enough), then for real once the slot is known.
        entry.plan = internal::plan_out_of_line(std::span(code.data(), n), addr, addr);
        if (entry.plan.how == ool_plan::kind::execute) {
            auto slot = alloc_slot(t, addr, entry.plan.rip_relative);
            if (!slot) {
                // No slot within reach of this rip-relative instruction (a library far
                // from the executable): single-step this site. No slot at all: the target
                // refuses the mapping, stop trying.
                if (!entry.plan.rip_relative) {
                    ool_disabled = true;
                }
                entry.plan.how = ool_plan::kind::single_step;
            } else {
                entry.slot = *slot;
                entry.plan = internal::plan_out_of_line(std::span(code.data(), n), addr, entry.slot);
                if (entry.plan.how == ool_plan::kind::execute && !raw_write(entry.slot, entry.plan.code)) {
                    entry.plan.how = ool_plan::kind::single_step;
                }
            }
        }
        entry.length = entry.plan.length;
        it = ool_sites.emplace(addr, std::move(entry)).first;
    }
    const ool_site& e = it->second;
    pid_t tid = t.tid_;
    switch (e.plan.how) {
    case ool_plan::kind::execute:
        write_pc(tid, e.slot);
        t.ool_slot = e.slot;
        t.ool_site = addr;
        t.ool_length = e.length;
        ++counts.out_of_line;
        return true;
    case ool_plan::kind::jump:
        write_pc(tid, e.plan.target);
        ++counts.emulated;
        return true;
    case ool_plan::kind::conditional: {
        auto flags = try_ptrace(PTRACE_PEEKUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, eflags)),
                                nullptr);
        if (!flags) {
            return false;
        }
        bool taken = internal::condition_holds(e.plan.condition, static_cast<std::uint64_t>(flags.value));
        write_pc(tid, taken ? e.plan.target : addr + e.length);
        ++counts.emulated;
        return true;
    }
    case ool_plan::kind::call: {
        auto sp = try_ptrace(PTRACE_PEEKUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, rsp)), nullptr);
        if (!sp) {
            return false;
        }
        std::uint64_t new_sp = static_cast<std::uint64_t>(sp.value) - 8;
        std::uint64_t ret = addr + e.length;
        std::array<std::byte, 8> bytes;
        std::memcpy(bytes.data(), &ret, 8);
        if (!raw_write(new_sp, bytes)) {
            return false;   // the stack is not writable: let the real call fault in place
        }
        try_ptrace(PTRACE_POKEUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, rsp)),
                   reinterpret_cast<void*>(new_sp));
        write_pc(tid, e.plan.target);
        t.forget_regs();
        ++counts.emulated;
        return true;
    }
    case ool_plan::kind::single_step: break;
    }
    ++counts.single_stepped;
    return false;
}

void ptrace_process::impl::normalise_out_of_line() {
    // A thread interrupted while in a slot stands either before the relocated instruction
    // (it has not run: back to the site, to be stepped over again on resume) or on the
    // jump back (it has run: on to the next instruction). Nothing else is possible: an
    // interrupt stops a thread only between instructions.
    for (auto& tp : threads) {
        thread_record& t = *tp;
        if (t.ool_slot == 0) {
            continue;
        }
        // A thread still running (an early report: process::set_early_breakpoint_reports)
        // keeps its slot until it stops.
        if (t.st != tstate::stopped) {
            continue;
        }
        std::uint64_t slot = t.ool_slot, site = t.ool_site, len = t.ool_length;
        t.ool_slot = 0;
        std::uint64_t pc;
        try {
            pc = read_pc(t.tid_);
        } catch (const error&) {
            continue;
        }
        if (pc == slot) {
            write_pc(t.tid_, site);
            t.step_over_pc = site;
        } else if (pc == slot + len) {
            write_pc(t.tid_, site + len);
        }
    }
}

void ptrace_process::impl::forget_out_of_line(std::uint64_t addr, std::size_t len) {
    // Code changed under a planned site (a write, a library unloaded): plan again. The old
    // slot stays as it is, since a thread may still be about to run through it.
    std::erase_if(ool_sites, [&](const auto& kv) {
        return kv.first < addr + len && kv.first + std::max<std::size_t>(kv.second.length, 1) > addr;
    });
}

}  // namespace ompdbg::tracer
