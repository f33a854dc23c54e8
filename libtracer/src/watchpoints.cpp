// Watchpoints: x86-64 debug registers (DR0-DR3 addresses, DR7 control, DR6 status) where
// they trap, and page-protection software watchpoints where they do not (gdb's hardware
// watchpoints never fire on some virtual machines). A software watchpoint costs nothing
// until the program touches a guarded page; then only the faulting instruction is
// single-stepped, with system calls injected into the stopped thread (rr's remote
// syscalls) to lift and restore the protection.

#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "internal/proc_fs.hpp"
#include "internal/process_impl.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/store_emulation.hpp"
#include "internal/syscall_injection.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::watch_entry;

namespace {

constexpr std::uint64_t page_size = internal::guard_page_size;

std::uint64_t page_of(std::uint64_t addr) { return addr & ~(page_size - 1); }

// The widest software watchpoint: every fault on its pages compares it whole.
constexpr std::size_t max_software_watch = 64 * 1024;

void* dr_offset(int n) {
    return reinterpret_cast<void*>(offsetof(struct user, u_debugreg) + static_cast<std::size_t>(n) * sizeof(long));
}

// DR7 bits for slot `slot`: local enable (bit 2n), R/W (bits 16+4n: 01 write, 11 read or
// write) and LEN (bits 18+4n: 00 one byte, 01 two, 11 four, 10 eight).
std::uint64_t dr7_bits(int slot, watch_kind kind, std::size_t size) {
    std::uint64_t rw = kind == watch_kind::write ? 0b01 : 0b11;
    std::uint64_t len = size == 1 ? 0b00 : size == 2 ? 0b01 : size == 4 ? 0b11 : 0b10;
    return (std::uint64_t{1} << (2 * slot)) | (rw << (16 + 4 * slot)) | (len << (18 + 4 * slot));
}

// The debug register covers an aligned 1/2/4/8-byte block; the smallest one holding
// [addr, addr + size) (the caller compares values, so the extra bytes are harmless).
std::optional<std::pair<std::uint64_t, std::size_t>> hardware_block(std::uint64_t addr, std::size_t size) {
    for (std::size_t len : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
        std::uint64_t base = addr & ~(static_cast<std::uint64_t>(len) - 1);
        if (len >= size && base + len >= addr + size) {
            return std::make_pair(base, len);
        }
    }
    return std::nullopt;
}

// Protection of the page holding `addr`, from /proc/PID/maps.
std::optional<int> page_protection(pid_t pid, std::uint64_t addr) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::uint64_t lo = 0, hi = 0;
        char perms[8] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) != 3) {
            continue;
        }
        if (addr >= lo && addr < hi) {
            int prot = PROT_NONE;
            prot |= perms[0] == 'r' ? PROT_READ : 0;
            prot |= perms[1] == 'w' ? PROT_WRITE : 0;
            prot |= perms[2] == 'x' ? PROT_EXEC : 0;
            return prot;
        }
    }
    return std::nullopt;
}

bool get_regs(pid_t tid, user_regs_struct& r) {
    return static_cast<bool>(try_ptrace(PTRACE_GETREGS, tid, nullptr, &r));
}

bool set_regs(pid_t tid, const user_regs_struct& r) {
    return static_cast<bool>(try_ptrace(PTRACE_SETREGS, tid, nullptr, const_cast<user_regs_struct*>(&r)));
}

/// How one single-step of a thread we hold ended.
struct step_result {
    bool trapped = false;              ///< the step completed (SIGTRAP)
    std::optional<siginfo_t> fault;    ///< it faulted (SIGSEGV) instead
    std::optional<int> lost_status;    ///< the thread exited or was killed (wait status)
};

// Single-steps `tid` and waits for that thread only. Asynchronous signals that arrive
// first are collected in `deferred` (the caller hands them back to the program).
step_result step_thread(pid_t tid, std::vector<int>& deferred) {
    step_result res;
    for (int attempt = 0; attempt < 64; ++attempt) {
        if (!try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr)) {
            res.lost_status = 0;
            return res;
        }
        int status = 0;
        pid_t r = internal::wait_tid(tid, &status, 0);
        if (r != tid) {
            res.lost_status = 0;
            return res;
        }
        if (!WIFSTOPPED(status)) {
            res.lost_status = status;
            return res;
        }
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP) {
            res.trapped = true;
            return res;
        }
        if (sig == SIGSEGV) {
            res.fault = internal::get_siginfo(tid);
            return res;
        }
        if (status >> 16 == 0 && sig != SIGSTOP) {
            deferred.push_back(sig);   // a signal arrived before the instruction ran
        }
    }
    return res;
}

// Runs one system call in the stopped thread `tid`: its pc goes to `gadget` (a `syscall`
// instruction of the program's own code), one single-step runs it, and the `saved`
// registers are put back. Nothing is written to the code, so the other threads may run on
// meanwhile, and the same gadget serves in a fork child (the same mappings).
// A thread parked at a system call's entry stop (PTRACE_SYSCALL: catch syscall, or a
// software watchpoint armed) has not made that call yet, but once the injected call has run
// it is back in user space: restoring its registers as they were would return -ENOSYS to
// the program (a thread corrupted this way was the earlier attempt's failure). `saved` is
// moved back onto the syscall instruction, with the call's number, so that the call is
// made again on resume; the caller's later injections restore the same.
std::optional<long> inject_syscall(pid_t tid, user_regs_struct& saved, std::uint64_t gadget, long nr,
                                   std::uint64_t a0, std::uint64_t a1, std::uint64_t a2, std::vector<int>& deferred) {
    __ptrace_syscall_info info{};
    auto got = try_ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info);
    if (got && got.value > 0 && info.op == PTRACE_SYSCALL_INFO_ENTRY) {
        saved.rip -= 2;   // `syscall` is 0f 05
        saved.rax = saved.orig_rax;
    }
    user_regs_struct r = saved;
    r.rip = gadget;
    r.rax = static_cast<unsigned long long>(nr);
    r.rdi = a0;
    r.rsi = a1;
    r.rdx = a2;
    r.orig_rax = static_cast<unsigned long long>(-1);   // no system call restart here
    if (!set_regs(tid, r)) {
        return std::nullopt;
    }
    step_result sr = step_thread(tid, deferred);
    std::optional<long> result;
    user_regs_struct after{};
    // A thread stopped in a system call's exit (the exec stop of a launch, a clone event)
    // reports that exit as a step trap before running any instruction, with the call's
    // return value in rax: the registers are set again and the step repeated.
    for (int again = 0; again < 2 && sr.trapped && get_regs(tid, after) && after.rip == gadget; ++again) {
        if (!set_regs(tid, r)) {
            break;
        }
        sr = step_thread(tid, deferred);
    }
    if (sr.trapped && get_regs(tid, after) && after.rip == gadget + 2) {
        result = static_cast<long>(after.rax);
    }
    if (!sr.lost_status) {
        set_regs(tid, saved);
    }
    log::write(log::channel::ptrace, "injected syscall {} in {}: result {}", nr, tid, result ? *result : -1);
    return result;
}

}  // namespace

namespace internal {

bool get_thread_regs(pid_t tid, user_regs_struct& r) { return get_regs(tid, r); }

bool set_thread_regs(pid_t tid, const user_regs_struct& r) { return set_regs(tid, r); }

std::optional<long> inject_syscall_into(pid_t tid, user_regs_struct& saved, std::uint64_t gadget, long nr,
                                        std::uint64_t a0, std::uint64_t a1, std::uint64_t a2,
                                        std::vector<int>& deferred) {
    return inject_syscall(tid, saved, gadget, nr, a0, a1, a2, deferred);
}

}  // namespace internal

bool hardware_watchpoints_trap() {
    static const bool traps = [] {
        static volatile int probe_target = 0;
        pid_t child = ::fork();
        if (child < 0) {
            return false;
        }
        if (child == 0) {
            // The child: be traced, stop, write the watched variable, exit.
            ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
            ::raise(SIGSTOP);
            probe_target = 1;
            ::_exit(0);
        }
        int status = 0;
        bool result = false;
        if (internal::wait_tid(child, &status, 0) == child && WIFSTOPPED(status)) {
            auto addr = reinterpret_cast<std::uint64_t>(&probe_target);
            bool written = try_ptrace(PTRACE_POKEUSER, child, dr_offset(0), reinterpret_cast<void*>(addr)) &&
                           try_ptrace(PTRACE_POKEUSER, child, dr_offset(7),
                                      reinterpret_cast<void*>(dr7_bits(0, watch_kind::write, 4)));
            if (written && try_ptrace(PTRACE_CONT, child, nullptr, nullptr)) {
                if (internal::wait_tid(child, &status, 0) == child && WIFSTOPPED(status) &&
                    WSTOPSIG(status) == SIGTRAP) {
                    result = true;
                }
            }
        }
        ::kill(child, SIGKILL);
        while (internal::wait_tid(child, &status, 0) == child && !WIFEXITED(status) && !WIFSIGNALED(status)) {
        }
        log::write(log::channel::ptrace, "debug-register watchpoints {}", result ? "trap" : "never trap");
        return result;
    }();
    return traps;
}

// The first `syscall` instruction in the target's executable mappings (cached per image).
std::uint64_t ptrace_process::impl::syscall_gadget() {
    if (watches.syscall_gadget) {
        return *watches.syscall_gadget;
    }
    std::vector<std::byte> buf;
    for (const auto& m : internal::read_maps(pid)) {
        if (m.perms.size() < 3 || m.perms[0] != 'r' || m.perms[2] != 'x' || m.path == "[vsyscall]") {
            continue;
        }
        buf.resize(m.end - m.start);
        std::size_t got = raw_read(m.start, buf);
        for (std::size_t i = 0; i + 1 < got; ++i) {
            if (buf[i] == std::byte{0x0f} && buf[i + 1] == std::byte{0x05}) {
                watches.syscall_gadget = m.start + i;
                return *watches.syscall_gadget;
            }
        }
    }
    error::send("Cannot set a software watchpoint: no system call instruction found in the program's code.");
}

// ---- debug registers ------------------------------------------------------------------

void ptrace_process::impl::apply_debug_registers(thread_record& t) {
    std::uint64_t dr7 = 0;
    for (int slot = 0; slot < hardware_watch_slots; ++slot) {
        const watch_entry* e = nullptr;
        if (watches.slots[slot]) {
            for (const auto& w : watches.entries) {
                if (w.id == *watches.slots[slot]) {
                    e = &w;
                }
            }
        }
        if (e == nullptr) {
            continue;
        }
        auto block = hardware_block(e->addr, e->size);
        try_ptrace(PTRACE_POKEUSER, t.tid_, dr_offset(slot), reinterpret_cast<void*>(block->first));
        dr7 |= dr7_bits(slot, e->kind, block->second);
    }
    // DR7 last: an enabled slot never points at a stale address.
    auto r = try_ptrace(PTRACE_POKEUSER, t.tid_, dr_offset(7), reinterpret_cast<void*>(dr7));
    if (!r) {
        log::write(log::channel::ptrace, "thread {}: DR7 not written: errno {}", t.tid_, r.err);
    }
}

std::vector<std::vector<std::byte>> ptrace_process::impl::software_watched_bytes() {
    std::vector<std::vector<std::byte>> out;
    for (const auto& e : watches.entries) {
        std::vector<std::byte> b(e.size);
        if (e.mode == watch_mode::software) {
            raw_read(e.addr, b);
        }
        out.push_back(std::move(b));
    }
    return out;
}

bool ptrace_process::impl::handle_debug_trap(thread_record& t) {
    auto dr6 = try_ptrace(PTRACE_PEEKUSER, t.tid_, dr_offset(6), nullptr);
    if (!dr6) {
        return false;
    }
    for (int slot = 0; slot < hardware_watch_slots; ++slot) {
        if ((dr6.value & (1L << slot)) == 0 || !watches.slots[slot]) {
            continue;
        }
        try_ptrace(PTRACE_POKEUSER, t.tid_, dr_offset(6), nullptr);   // DR6 is sticky
        const watch_entry* e = nullptr;
        for (const auto& w : watches.entries) {
            if (w.id == *watches.slots[slot]) {
                e = &w;
            }
        }
        stop_reason r;
        r.kind = stop_kind::watchpoint;
        r.tid = t.tid_;
        r.watchpoint_id = *watches.slots[slot];
        r.watch_addr = virt_addr(e ? e->addr : 0);
        t.st = tstate::stopped;
        t.forget_regs();
        if (t.stepping) {
            t.stepping = false;
            t.step_done = true;
        }
        queue_event(r);
        return true;
    }
    return false;
}

// ---- software watchpoints -------------------------------------------------------------

namespace {

// The protection a guarded page needs for the watchpoints on it (nullopt: none left).
std::optional<int> guard_for(const internal::watch_state& w, std::uint64_t page, int original) {
    std::optional<int> prot;
    for (const auto& e : w.entries) {
        if (e.mode != watch_mode::software || page_of(e.addr) > page || page_of(e.addr + e.size - 1) < page) {
            continue;
        }
        int p = e.kind == watch_kind::write ? (original & ~PROT_WRITE) : PROT_NONE;
        prot = prot ? (*prot & p) : p;
    }
    return prot;
}

}  // namespace

bool ptrace_process::impl::handle_watch_fault(thread_record& t, const siginfo_t& si) {
    auto fault = reinterpret_cast<std::uint64_t>(si.si_addr);
    log::write(log::channel::ptrace, "thread {}: SIGSEGV code {} at 0x{:x}", t.tid_, si.si_code, fault);
    if (si.si_code != SEGV_ACCERR) {
        return false;   // a real SIGSEGV: the program's own
    }
    if (!watches.guarded_prot.count(page_of(fault))) {
        if (t.unguarded_pages.erase(page_of(fault)) == 0) {
            return false;
        }
        // Stale: the fault was pending when the guard was lifted. Run the instruction again
        // (once: a second fault there is the program's own).
        log::write(log::channel::ptrace, "thread {}: stale SIGSEGV at 0x{:x} dropped", t.tid_, fault);
        t.forget_regs();
        if (t.stepping) {
            try_ptrace(PTRACE_SINGLESTEP, t.tid_, nullptr, nullptr);
        } else if (stopping_all || !queue.empty()) {
            t.st = tstate::stopped;
        } else {
            cont(t, 0);
        }
        return true;
    }
    t.unguarded_pages.erase(page_of(fault));
    ++watches.faults;
    if ((stopping_all || !queue.empty()) && !t.stepping) {
        // Another thread has something to report (it is being stopped, or is about to be):
        // the access is not done now; the thread runs the instruction again (and faults
        // again) when resumed, so that each change is reported on its own, with its value.
        t.st = tstate::stopped;
        t.forget_regs();
        return true;
    }
    const tstate before = t.st;
    const pid_t tid = t.tid_;
    t.forget_regs();
    user_regs_struct regs{};
    if (!get_regs(tid, regs)) {
        return false;
    }
    // The watched bytes before the instruction.
    std::vector<std::vector<std::byte>> old_bytes = software_watched_bytes();
    std::vector<int> deferred;
    std::vector<std::uint64_t> lifted;
    bool lost = false;
    std::uint64_t page = page_of(fault);
    step_result sr;
    // The common case, a plain move, is done here through /proc/PID/mem: one stop.
    std::byte code[15];
    std::size_t code_len = raw_read(regs.rip, code);
    auto move = internal::decode_move(std::span<const std::byte>(code, code_len), regs);
    if (move && (fault < move->address || fault >= move->address + move->size)) {
        move.reset();   // not the access that faulted (should not happen): do it for real
    }
    if (move) {
        bool done = false;
        if (move->is_store) {
            done = raw_write(move->address, std::as_bytes(std::span(&move->value, 1)).first(move->size));
            regs.rip += move->length;
        } else {
            std::uint64_t loaded = 0;
            done = raw_read(move->address, std::as_writable_bytes(std::span(&loaded, 1)).first(move->size)) ==
                   move->size;
            internal::apply_load(*move, loaded, regs);
        }
        if (done && set_regs(tid, regs)) {
            sr.trapped = true;
        } else {
            move.reset();
            get_regs(tid, regs);
        }
    }
    // While the guard is lifted, any thread could write the page unseen: the others are
    // stopped first (their own faults meanwhile wait, see above) and resumed afterwards.
    std::vector<pid_t> paused;
    if (!move) {
        for (auto& o : threads) {
            if (o.get() != &t && o->st == tstate::running) {
                paused.push_back(o->tid_);
            }
        }
        if (!paused.empty()) {
            t.st = tstate::stopped;   // already in its SIGSEGV stop: not interrupted again
            stop_all();
        }
    }
    auto resume_paused = [&] {
        if (!queue.empty() || end) {
            return;   // something to report: the wait loop stops everything and reports it
        }
        for (pid_t p : paused) {
            if (thread_record* o = find(p); o != nullptr && o->st == tstate::stopped) {
                cont(*o, o->pending_signal);
                o->pending_signal = 0;
            }
        }
    };
    // Lift the guard, run the instruction; an instruction touching a second guarded
    // page (a string copy across pages) faults again there: lift that one too.
    for (int round = 0; round < 8 && !move; ++round) {
        auto rc = inject_syscall(tid, regs, syscall_gadget(), SYS_mprotect, page, page_size, static_cast<std::uint64_t>(watches.original_prot[page]),
                                 deferred);
        if (!rc) {
            lost = true;
            break;
        }
        lifted.push_back(page);
        sr = step_thread(tid, deferred);
        if (sr.lost_status) {
            lost = true;
            break;
        }
        if (sr.fault && sr.fault->si_code == SEGV_ACCERR &&
            watches.guarded_prot.count(page_of(reinterpret_cast<std::uint64_t>(sr.fault->si_addr))) &&
            std::find(lifted.begin(), lifted.end(), page_of(reinterpret_cast<std::uint64_t>(sr.fault->si_addr))) ==
                lifted.end()) {
            page = page_of(reinterpret_cast<std::uint64_t>(sr.fault->si_addr));
            get_regs(tid, regs);
            continue;
        }
        break;
    }
    if (lost) {
        log::write(log::channel::ptrace, "thread {} went away during a watchpoint step", tid);
        t.st = tstate::running;   // its exit status is collected by the next poll
        resume_paused();
        return true;
    }
    user_regs_struct after{};
    if (!lifted.empty()) {
        get_regs(tid, after);
    }
    for (std::uint64_t p : lifted) {
        inject_syscall(tid, after, syscall_gadget(), SYS_mprotect, p, page_size, static_cast<std::uint64_t>(watches.guarded_prot[p]),
                       deferred);
    }
    std::optional<stop_reason> hit;
    for (std::size_t i = 0; i < watches.entries.size() && !hit; ++i) {
        const auto& e = watches.entries[i];
        if (e.mode != watch_mode::software) {
            continue;
        }
        std::vector<std::byte> now(e.size);
        raw_read(e.addr, now);
        bool changed = now != old_bytes[i];
        std::uint64_t lo = move ? move->address : fault;
        std::uint64_t hi = move ? move->address + move->size : fault + 1;
        bool overlaps = lo < e.addr + e.size && e.addr < hi;
        bool triggered = e.kind == watch_kind::write ? changed
                         : e.kind == watch_kind::read ? overlaps && !changed
                                                      : overlaps || changed;
        if (triggered) {
            stop_reason r;
            r.kind = stop_kind::watchpoint;
            r.tid = tid;
            r.watchpoint_id = e.id;
            r.watch_addr = virt_addr(fault);
            hit = r;
        }
    }
    // A real fault of the stepped instruction (outside our pages) is the program's.
    if (sr.fault) {
        stop_reason r;
        r.kind = stop_kind::signal;
        r.tid = tid;
        r.signo = SIGSEGV;
        r.si_code = sr.fault->si_code;
        r.fault_addr = virt_addr(reinterpret_cast<std::uint64_t>(sr.fault->si_addr));
        hit = r;
        t.pending_signal = SIGSEGV;
    } else if (!deferred.empty()) {
        t.pending_signal = deferred.front();
    }
    t.forget_regs();
    t.step_over_pc.reset();
    if (t.stepping) {
        // The user's single-step ran exactly this instruction.
        t.stepping = false;
        t.step_done = sr.trapped;
        t.st = tstate::stopped;
    } else if (hit || before == tstate::stopping || before == tstate::starting || stopping_all) {
        t.st = tstate::stopped;
    } else {
        cont(t, t.pending_signal);
        t.pending_signal = 0;
    }
    if (hit) {
        queue_event(*hit);
    }
    resume_paused();
    return true;
}

void ptrace_process::impl::drop_watchpoints(bool restore) {
    if (restore) {
        for (auto& t : threads) {
            if (t->st == tstate::stopped && watches.has_hardware()) {
                try_ptrace(PTRACE_POKEUSER, t->tid_, dr_offset(7), nullptr);
            }
        }
        thread_record* any = nullptr;
        for (auto& t : threads) {
            if (t->st == tstate::stopped) {
                any = t.get();
                break;
            }
        }
        if (any != nullptr) {
            user_regs_struct regs{};
            std::vector<int> deferred;
            if (get_regs(any->tid_, regs)) {
                for (auto& [page, prot] : watches.original_prot) {
                    inject_syscall(any->tid_, regs, syscall_gadget(), SYS_mprotect, page, page_size, static_cast<std::uint64_t>(prot),
                                   deferred);
                }
            }
            any->forget_regs();
            if (!deferred.empty()) {
                any->pending_signal = deferred.front();
            }
        }
    }
    watches = internal::watch_state{};
}

void ptrace_process::impl::unguard_fork_child(pid_t child) {
    if (watches.original_prot.empty()) {
        return;
    }
    user_regs_struct regs{};
    std::vector<int> deferred;
    if (!get_regs(child, regs)) {
        return;
    }
    for (auto& [page, prot] : watches.original_prot) {
        inject_syscall(child, regs, syscall_gadget(), SYS_mprotect, page, page_size, static_cast<std::uint64_t>(prot), deferred);
    }
}

void ptrace_process::impl::reguard_pages(pid_t tid) {
    if (watches.guarded_prot.empty()) {
        return;
    }
    user_regs_struct regs{};
    std::vector<int> deferred;
    if (!get_regs(tid, regs)) {
        return;
    }
    for (auto& [page, prot] : watches.guarded_prot) {
        inject_syscall(tid, regs, syscall_gadget(), SYS_mprotect, page, page_size, static_cast<std::uint64_t>(prot), deferred);
    }
    if (thread_record* t = find(tid)) {
        t->forget_regs();
        if (!deferred.empty()) {
            t->pending_signal = deferred.front();
        }
    }
}

// ---- public API -----------------------------------------------------------------------

int ptrace_process::add_watchpoint(virt_addr addr, std::size_t size, watch_kind kind, watch_mode mode) {
    auto& d = *impl_;
    d.require_stopped();
    d.settle();   // debug registers and guards are set with every thread stopped
    // A debug register covers 1, 2, 4 or 8 bytes; guarded pages any range (a struct, an
    // array), as gdb's software watchpoints watch a value of any size as a whole.
    if (mode == watch_mode::hardware ? (size != 1 && size != 2 && size != 4 && size != 8)
                                     : (size == 0 || size > max_software_watch)) {
        error::send(mode == watch_mode::hardware
                        ? std::string("A hardware watchpoint covers 1, 2, 4 or 8 bytes.")
                        : fmt::format("A software watchpoint covers 1 to {} bytes.", max_software_watch));
    }
    watch_entry e;
    e.id = d.watches.next_id;
    e.addr = addr.addr();
    e.size = size;
    e.kind = kind;
    e.mode = mode;
    if (mode == watch_mode::hardware) {
        if (!hardware_block(e.addr, size)) {
            error::send(fmt::format("Cannot watch {} bytes at 0x{:x} with one debug register: they cross an "
                                    "8-byte boundary.",
                                    size, e.addr));
        }
        auto free = std::find(d.watches.slots.begin(), d.watches.slots.end(), std::nullopt);
        if (free == d.watches.slots.end()) {
            error::send("Hardware watchpoint slots exhausted: all 4 debug registers are in use.");
        }
        e.slot = static_cast<int>(free - d.watches.slots.begin());
        *free = e.id;
        d.watches.entries.push_back(e);
        for (auto& t : d.threads) {
            if (t->st == tstate::stopped || t->st == tstate::listening) {
                d.apply_debug_registers(*t);
            }
        }
    } else {
        thread_record* runner = nullptr;
        for (auto& t : d.threads) {
            if (t->st == tstate::stopped) {
                runner = t.get();
                break;
            }
        }
        if (runner == nullptr) {
            error::send("Cannot set a software watchpoint: no stopped thread to run mprotect.");
        }
        std::vector<std::uint64_t> pages;
        for (std::uint64_t p = page_of(e.addr); p <= page_of(e.addr + size - 1); p += page_size) {
            pages.push_back(p);
            if (!d.watches.original_prot.count(p)) {
                auto prot = page_protection(d.pid, p);
                if (!prot) {
                    error::send(fmt::format("Cannot access memory at address 0x{:x}", e.addr));
                }
                d.watches.original_prot[p] = *prot;
            }
        }
        d.watches.entries.push_back(e);
        user_regs_struct regs{};
        if (!get_regs(runner->tid_, regs)) {
            d.watches.entries.pop_back();
            error::send("Cannot set a software watchpoint: the thread's registers cannot be read.");
        }
        std::vector<int> deferred;
        for (std::uint64_t p : pages) {
            int prot = *guard_for(d.watches, p, d.watches.original_prot[p]);
            auto rc = inject_syscall(runner->tid_, regs, d.syscall_gadget(), SYS_mprotect, p, page_size, static_cast<std::uint64_t>(prot),
                                     deferred);
            if (!rc || *rc != 0) {
                d.watches.entries.pop_back();
                error::send(fmt::format("Cannot protect the page at 0x{:x} for a software watchpoint.", p));
            }
            d.watches.guarded_prot[p] = prot;
        }
        runner->forget_regs();
        if (!deferred.empty()) {
            runner->pending_signal = deferred.front();
        }
    }
    ++d.watches.next_id;
    log::write(log::channel::ptrace, "watchpoint {} at 0x{:x} size {} ({})", e.id, e.addr, size,
               mode == watch_mode::hardware ? "hardware" : "software");
    return e.id;
}

void ptrace_process::remove_watchpoint(int id) {
    auto& d = *impl_;
    d.require_stopped();
    d.settle();   // debug registers and guards are set with every thread stopped
    auto it = std::find_if(d.watches.entries.begin(), d.watches.entries.end(),
                           [&](const watch_entry& e) { return e.id == id; });
    if (it == d.watches.entries.end()) {
        return;
    }
    watch_entry e = *it;
    d.watches.entries.erase(it);
    if (e.mode == watch_mode::hardware) {
        d.watches.slots[static_cast<std::size_t>(e.slot)].reset();
        for (auto& t : d.threads) {
            if (t->st == tstate::stopped || t->st == tstate::listening) {
                d.apply_debug_registers(*t);
            }
        }
        return;
    }
    thread_record* runner = nullptr;
    for (auto& t : d.threads) {
        if (t->st == tstate::stopped) {
            runner = t.get();
            break;
        }
    }
    user_regs_struct regs{};
    if (runner == nullptr || !get_regs(runner->tid_, regs)) {
        return;
    }
    std::vector<int> deferred;
    for (std::uint64_t p = page_of(e.addr); p <= page_of(e.addr + e.size - 1); p += page_size) {
        int original = d.watches.original_prot[p];
        auto prot = guard_for(d.watches, p, original);
        inject_syscall(runner->tid_, regs, d.syscall_gadget(), SYS_mprotect, p, page_size, static_cast<std::uint64_t>(prot.value_or(original)),
                       deferred);
        if (prot) {
            d.watches.guarded_prot[p] = *prot;
        } else {
            d.watches.guarded_prot.erase(p);
            d.watches.original_prot.erase(p);
            for (auto& t : d.threads) {
                t->unguarded_pages.insert(p);
            }
        }
    }
    runner->forget_regs();
    if (!deferred.empty()) {
        runner->pending_signal = deferred.front();
    }
}

int ptrace_process::hardware_watchpoints_in_use() const {
    int n = 0;
    for (const auto& s : impl_->watches.slots) {
        n += s ? 1 : 0;
    }
    return n;
}

}  // namespace ompdbg::tracer
