// Memory of a live process (process_vm_readv, /proc/PID/mem), breakpoint sites (int3 bytes
// hidden from reads, writes over a site update its saved byte) and per-thread registers.

#include "internal/env_switch.hpp"
#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cpuid.h>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <elf.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

namespace ompdbg::tracer {

using internal::try_ptrace;

namespace {

[[noreturn]] void cannot_access(std::uint64_t addr) {
    error::send(fmt::format("Cannot access memory at address {:#x}", addr));
}

// Offset of the AVX-512 opmask state (XSAVE component 5) in the XSAVE area, 0 if absent.
std::size_t opmask_offset() {
    static const std::size_t off = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d) || !(a & (1u << 5))) {
            return std::size_t{0};
        }
        __get_cpuid_count(0xd, 5, &a, &b, &c, &d);
        return static_cast<std::size_t>(b);
    }();
    return off;
}

}  // namespace

// ---- threads ----------------------------------------------------------------------------

std::string thread_record::name() const { return internal::thread_comm(owner_.pid, tid_); }

thread_state thread_record::state() const {
    switch (st) {
    case tstate::stopped:
    case tstate::listening: return thread_state::stopped;
    case tstate::zombie: return thread_state::exited;
    default: return thread_state::running;
    }
}

const registers& thread_record::regs() {
    if (cache) {
        return *cache;
    }
    if (st != tstate::stopped && st != tstate::listening) {
        error::send(st == tstate::zombie ? "Thread has exited." : "Selected thread is running.");
    }
    user_regs_struct gp = gp_regs();
    user_fpregs_struct fp{};
    try_ptrace(PTRACE_GETFPREGS, tid_, nullptr, &fp);
    registers regs(gp, fp);
    if (std::size_t off = opmask_offset()) {
        alignas(64) std::byte xsave[4096]{};
        iovec iov{xsave, sizeof xsave};
        if (try_ptrace(PTRACE_GETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) &&
            iov.iov_len >= off + 64) {
            std::uint64_t xstate_bv;
            std::memcpy(&xstate_bv, xsave + 512, 8);
            std::array<std::uint64_t, 8> k{};
            if (xstate_bv & (1u << 5)) {   // otherwise the component is in its init state: 0
                std::memcpy(k.data(), xsave + off, 64);
            }
            regs.set_avx512_masks(k);
        }
    }
    cache = regs;
    return *cache;
}

const user_regs_struct& thread_record::gp_regs() {
    if (cache) {
        return cache->gp();
    }
    if (gp_cache) {
        return *gp_cache;
    }
    if (st != tstate::stopped && st != tstate::listening) {
        error::send(st == tstate::zombie ? "Thread has exited." : "Selected thread is running.");
    }
    user_regs_struct gp{};
    auto r = try_ptrace(PTRACE_GETREGS, tid_, nullptr, &gp);
    if (!r) {
        error::send_errno("Couldn't get registers", r.err);
    }
    gp_cache = gp;
    return *gp_cache;
}

void thread_record::write_regs(const registers& r) {
    if (st != tstate::stopped && st != tstate::listening) {
        error::send("Selected thread is running.");
    }
    user_regs_struct gp = r.gp();
    user_fpregs_struct fp = r.fp_regs();
    auto res = try_ptrace(PTRACE_SETREGS, tid_, nullptr, &gp);
    if (!res) {
        error::send_errno("Couldn't write registers", res.err);
    }
    try_ptrace(PTRACE_SETFPREGS, tid_, nullptr, &fp);
    pc_cache.reset();
    if (r.has_avx512_masks()) {
        if (std::size_t off = opmask_offset()) {
            alignas(64) std::byte xsave[4096]{};
            iovec iov{xsave, sizeof xsave};
            if (try_ptrace(PTRACE_GETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) &&
                iov.iov_len >= off + 64) {
                std::memcpy(xsave + off, r.avx512_masks().data(), 64);
                std::uint64_t xstate_bv;
                std::memcpy(&xstate_bv, xsave + 512, 8);
                xstate_bv |= 1u << 5;
                std::memcpy(xsave + 512, &xstate_bv, 8);
                try_ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov);
            }
        }
    }
    cache = r;
    gp_cache.reset();
}

thread_record* ptrace_process::impl::find(pid_t tid) {
    for (auto& t : threads) {
        if (t->tid_ == tid) {
            return t.get();
        }
    }
    return nullptr;
}

thread_record& ptrace_process::impl::add_thread(pid_t tid, tstate st) {
    threads.push_back(std::make_unique<thread_record>(*this, tid));
    threads.back()->st = st;
    return *threads.back();
}

void ptrace_process::impl::remove_thread(pid_t tid) {
    std::erase_if(threads, [&](const auto& t) { return t->tid_ == tid; });
}

std::uint64_t ptrace_process::impl::read_pc(pid_t tid) {
    thread_record* t = find(tid);
    if (t && t->cache) {
        return t->cache->pc();
    }
    if (t && t->gp_cache) {
        return t->gp_cache->rip;
    }
    if (t && t->first_stop && t->st == tstate::stopped) {
        return t->gp_regs().rip;
    }
    if (t && t->pc_cache) {
        return *t->pc_cache;
    }
    auto r = try_ptrace(PTRACE_PEEKUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, rip)), nullptr);
    if (!r) {
        error::send_errno("Couldn't get registers", r.err);
    }
    if (t && (t->st == tstate::stopped || t->st == tstate::listening)) {
        t->pc_cache = static_cast<std::uint64_t>(r.value);
    }
    return static_cast<std::uint64_t>(r.value);
}

void ptrace_process::impl::write_pc(pid_t tid, std::uint64_t pc) {
    auto r = try_ptrace(PTRACE_POKEUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, rip)),
                        reinterpret_cast<void*>(pc));
    if (!r) {
        error::send_errno("Couldn't write registers", r.err);
    }
    if (thread_record* t = find(tid)) {
        if (t->cache) {
            t->cache->set_pc(pc);
        }
        if (t->gp_cache) {
            t->gp_cache->rip = pc;
        }
        t->pc_cache = pc;
    }
}

// ---- memory -----------------------------------------------------------------------------

void ptrace_process::impl::open_mem() {
    if (mem_fd >= 0) {
        ::close(mem_fd);
    }
    // Opened once per address space (an fd opened before execve keeps the old mm).
    mem_fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDWR | O_CLOEXEC);
}

std::size_t ptrace_process::impl::raw_read(std::uint64_t addr, std::span<std::byte> out) {
    std::size_t done = 0;
    while (done < out.size()) {
        long r = internal::read_process_memory(pid, addr + done, out.subspan(done));
        if (r > 0) {
            done += static_cast<std::size_t>(r);
            continue;
        }
        // process_vm_readv refuses pages without read permission (and [vvar]); the
        // ptrace-checked /proc/PID/mem reads them like gdb does.
        if (mem_fd < 0) {
            break;
        }
        ssize_t p = ::pread(mem_fd, out.data() + done, out.size() - done, static_cast<off_t>(addr + done));
        if (p <= 0) {
            break;
        }
        done += static_cast<std::size_t>(p);
    }
    return done;
}

namespace {
// OMPDBG_MEMORY_CACHE=off reads every piece from the process (the "before" of workload 3).
bool memory_cache_enabled() {
    static const bool on = internal::env_switch_on("OMPDBG_MEMORY_CACHE", "off");
    return on;
}
}  // namespace

std::size_t ptrace_process::impl::cached_read(std::uint64_t addr, std::span<std::byte> out) {
    using cache = memory_cache;
    // Large reads (dump memory, core files) gain nothing from the cache and would evict it.
    // While other threads run after an early report, their writes would go unseen.
    if (!memory_cache_enabled() || out.size() > 16 * cache::page || others_running) {
        return raw_read(addr, out);
    }
    if (std::uint64_t g = internal::resume_generation(); g != mem_cache.generation) {
        mem_cache.pages.clear();
        mem_cache.private_ranges.reset();
        mem_cache.generation = g;
    }
    if (mem_cache.pages.size() > 8192) {   // 32 MiB: start again
        mem_cache.pages.clear();
    }
    std::size_t done = 0;
    while (done < out.size()) {
        std::uint64_t at = addr + done;
        std::uint64_t base = at & ~(cache::page - 1);
        auto it = mem_cache.pages.find(base);
        if (it == mem_cache.pages.end()) {
            auto bytes = std::make_unique<std::byte[]>(cache::page);
            if (raw_read(base, std::span(bytes.get(), cache::page)) != cache::page) {
                // A page that cannot be read whole (its end unmapped, no permission):
                // the rest straight from the process, as before.
                return done + raw_read(at, out.subspan(done));
            }
            it = mem_cache.pages.emplace(base, std::move(bytes)).first;
        }
        std::size_t n = std::min<std::size_t>(out.size() - done, base + cache::page - at);
        std::memcpy(out.data() + done, it->second.get() + (at - base), n);
        done += n;
    }
    return done;
}

bool ptrace_process::impl::raw_write(std::uint64_t addr, std::span<const std::byte> data) {
    forget_memory();
    std::size_t done = 0;
    while (done < data.size() && mem_fd >= 0) {
        ssize_t w = ::pwrite(mem_fd, data.data() + done, data.size() - done, static_cast<off_t>(addr + done));
        if (w <= 0) {
            break;
        }
        done += static_cast<std::size_t>(w);
    }
    if (done == data.size()) {
        return true;
    }
    // Fallback: word-sized PTRACE_POKEDATA, merging partial words.
    while (done < data.size()) {
        std::uint64_t a = addr + done;
        std::uint64_t aligned = a & ~std::uint64_t{7};
        auto peek = try_ptrace(PTRACE_PEEKDATA, pid, reinterpret_cast<void*>(aligned), nullptr);
        if (!peek) {
            return false;
        }
        long word = peek.value;
        std::size_t off = a - aligned;
        std::size_t n = std::min<std::size_t>(8 - off, data.size() - done);
        std::memcpy(reinterpret_cast<char*>(&word) + off, data.data() + done, n);
        if (!try_ptrace(PTRACE_POKEDATA, pid, reinterpret_cast<void*>(aligned), reinterpret_cast<void*>(word))) {
            return false;
        }
        done += n;
    }
    return true;
}

void ptrace_process::impl::insert_int3(breakpoint_site& s) {
    if (vfork_pending) {
        // The memory is the vfork child's now (with its own int3s): VFORK_DONE inserts it.
        return;
    }
    if (auto* p = pad_of(s.addr_.addr())) {
        arm_pad(*p);   // a fast site: its jump instead of an int3 (jump_pad_sites.cpp)
        return;
    }
    std::byte orig{};
    if (raw_read(s.addr_.addr(), std::span(&orig, 1)) != 1) {
        cannot_access(s.addr_.addr());
    }
    std::byte cc{0xcc};
    if (!raw_write(s.addr_.addr(), std::span(&cc, 1))) {
        cannot_access(s.addr_.addr());
    }
    s.saved_ = orig;
    lifted_int3.erase(s.addr_.addr());
}

void ptrace_process::impl::remove_int3(breakpoint_site& s) {
    if (vfork_pending) {
        return;   // not in the memory while a vfork child shares it (insert_int3)
    }
    if (auto* p = pad_of(s.addr_.addr())) {
        disarm_pad(*p);
        return;
    }
    // Best effort: the process may already be gone.
    raw_write(s.addr_.addr(), std::span(&s.saved_, 1));
    lifted_int3[s.addr_.addr()] = s.saved_;
}

// The kernel reports an int3's SIGTRAP only when the thread next returns to user space;
// a PTRACE_INTERRUPT that arrives at the same time is reported first. So a thread stopped
// by stop_all may carry the SIGTRAP of one of our int3s into its next resume, after the
// debugger deleted or disabled that breakpoint. Its pc is then one past an address where
// we had an int3 and the program has another instruction (not its own int3).
bool ptrace_process::impl::is_lifted_int3_trap(std::uint64_t pc) const {
    auto it = lifted_int3.find(pc - 1);
    return it != lifted_int3.end() && it->second != std::byte{0xcc};
}

ptrace_process::impl::~impl() {
    if (mem_fd >= 0) {
        ::close(mem_fd);
    }
}

std::size_t ptrace_process::try_read_memory(virt_addr addr, std::span<std::byte> out) {
    auto& d = *impl_;
    if (!d.alive) {
        return 0;
    }
    std::size_t n = d.cached_read(addr.addr(), out);
    // Show the program's bytes, not our int3s (none while a vfork child has the memory).
    auto it = d.sites.lower_bound(addr.addr());
    for (; !d.vfork_pending && it != d.sites.end() && it->first < addr.addr() + n; ++it) {
        if (it->second->is_enabled() && d.pad_of(it->first) == nullptr) {
            out[it->first - addr.addr()] = it->second->saved_byte();
        }
    }
    d.mask_pads(addr.addr(), out.first(n));
    return n;
}

void ptrace_process::impl::forget_shared_memory() {
    // A handful of pages costs less to read again than /proc/PID/maps does to parse (a
    // breakpoint's `silent` + `continue` between two reads); a listing over 64 threads
    // keeps hundreds of private pages worth keeping from one command to the next.
    constexpr std::size_t worth_sorting = 32;
    auto& pages = mem_cache.pages;
    if (pages.size() < worth_sorting) {
        pages.clear();
        return;
    }
    if (std::uint64_t g = internal::resume_generation(); g != mem_cache.generation) {
        pages.clear();   // stale anyway; cached_read would drop them
        return;
    }
    if (!mem_cache.private_ranges) {
        auto& ranges = mem_cache.private_ranges.emplace();
        try {
            for (const auto& m : proc_fs::read_maps(pid)) {
                bool is_private = m.perms.size() >= 4 && m.perms[3] == 'p';
                if (is_private && m.path != "[vvar]" && m.path != "[vsyscall]") {
                    ranges.emplace_back(m.start, m.end);
                }
            }
        } catch (const std::exception&) {
            ranges.clear();
        }
    }
    const auto& ranges = *mem_cache.private_ranges;
    std::erase_if(pages, [&](const auto& page) {
        std::uint64_t base = page.first;
        auto it = std::upper_bound(ranges.begin(), ranges.end(), base,
                                   [](std::uint64_t a, const auto& r) { return a < r.first; });
        return it == ranges.begin() || std::prev(it)->second < base + memory_cache::page;
    });
}

void ptrace_process::forget_cached_memory() {
    impl_->forget_shared_memory();
}

std::uint64_t ptrace_process::resume_count() const {
    return internal::resume_generation();
}

void ptrace_process::read_memory(virt_addr addr, std::span<std::byte> out) {
    std::size_t n = try_read_memory(addr, out);
    if (n < out.size()) {
        cannot_access(addr.addr() + n);
    }
}

void ptrace_process::write_memory(virt_addr addr, std::span<const std::byte> data) {
    auto& d = *impl_;
    d.require_alive();
    std::vector<std::byte> buf(data.begin(), data.end());
    // A write over a planted int3 changes the byte restored later; the int3 stays.
    auto it = d.sites.lower_bound(addr.addr());
    for (; it != d.sites.end() && it->first < addr.addr() + data.size(); ++it) {
        if (it->second->is_enabled() && d.pad_of(it->first) == nullptr) {
            std::size_t i = it->first - addr.addr();
            it->second->saved_ = buf[i];
            buf[i] = std::byte{0xcc};
        }
    }
    if (!d.raw_write(addr.addr(), buf)) {
        cannot_access(addr.addr());
    }
    d.forget_out_of_line(addr.addr(), data.size());
}

// ---- breakpoint sites -------------------------------------------------------------------

breakpoint_site& ptrace_process::add_breakpoint_site(virt_addr addr, bool internal) {
    auto& d = *impl_;
    d.require_alive();
    if (auto it = d.sites.find(addr.addr()); it != d.sites.end()) {
        auto& s = *it->second;
        if (!s.enabled_) {
            d.insert_int3(s);
            s.enabled_ = true;
        }
        ++s.refcount_;
        if (!internal) {
            s.internal_ = false;
        }
        return s;
    }
    std::unique_ptr<breakpoint_site> s(new breakpoint_site(d.next_site_id, addr, internal));
    d.insert_int3(*s);   // throws "Cannot access memory at address 0x..."
    ++d.next_site_id;
    s->enabled_ = true;
    s->refcount_ = 1;
    auto& ref = *s;
    d.sites.emplace(addr.addr(), std::move(s));
    return ref;
}

void ptrace_process::remove_breakpoint_site(virt_addr addr) {
    auto& d = *impl_;
    auto it = d.sites.find(addr.addr());
    if (it == d.sites.end()) {
        return;
    }
    if (--it->second->refcount_ > 0) {
        return;
    }
    if (it->second->enabled_ && d.alive) {
        d.remove_int3(*it->second);
    }
    d.retire_pad(addr.addr());
    d.sites.erase(it);
}

breakpoint_site* ptrace_process::find_breakpoint_site(virt_addr addr) {
    auto it = impl_->sites.find(addr.addr());
    return it == impl_->sites.end() ? nullptr : it->second.get();
}

void ptrace_process::enable_site(virt_addr addr) {
    auto& d = *impl_;
    if (auto* s = find_breakpoint_site(addr); s && !s->enabled_) {
        d.require_alive();
        d.insert_int3(*s);
        s->enabled_ = true;
    }
}

void ptrace_process::disable_site(virt_addr addr) {
    auto& d = *impl_;
    if (auto* s = find_breakpoint_site(addr); s && s->enabled_) {
        if (d.alive) {
            d.remove_int3(*s);
        }
        s->enabled_ = false;
    }
}

process::step_over_counts ptrace_process::step_overs() const { return impl_->counts; }

// ---- threads of the target interface --------------------------------------------------------

std::vector<thread*> ptrace_process::threads() {
    std::vector<thread*> out;
    for (auto& t : impl_->threads) {
        if (t->st != tstate::zombie && t->st != tstate::starting) {
            out.push_back(t.get());
        }
    }
    return out;
}

thread* ptrace_process::find_thread(pid_t tid) {
    auto* t = impl_->find(tid);
    return t && t->st != tstate::zombie ? t : nullptr;
}

}  // namespace ompdbg::tracer
