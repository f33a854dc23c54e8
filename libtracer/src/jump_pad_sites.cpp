// Breakpoint sites served by a jump pad instead of an int3 (issue 21; internal/jump_pad.hpp
// for the pad's code). A pad site is an ordinary breakpoint_site for everything above the
// tracer: enabling writes the 5-byte jump and arms the pad, disabling puts the original
// bytes back and disarms it (insert_int3/remove_int3 dispatch here), and a stop the pad
// asks for is reported as a hit of the site with the pc at the site.
//
// Pads live in pages injected below the executable (with the out-of-line slots), or for a
// site in a shared library far from it, a page within reach of the library; they are
// never freed: a thread may still be inside one when its site goes (it then runs the
// relocated instructions and returns to the original code).

#include "internal/instruction_relocation.hpp"
#include "internal/jump_pad.hpp"
#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"

#include "ompdbg/agent/agent_abi.h"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <array>

#include <sys/ptrace.h>

namespace ompdbg::tracer {

namespace {
constexpr std::uint64_t pad_page_size = 4096;
constexpr std::uint64_t pad_reach = 1ull << 30;   // well inside rel32's +-2 GiB
}  // namespace

ptrace_process::impl::pad_site* ptrace_process::impl::pad_of(std::uint64_t addr) {
    auto it = pads.find(addr);
    return it == pads.end() ? nullptr : &it->second;
}

void ptrace_process::impl::move_threads_into_pad(const internal::jump_pad& pad) {
    // A thread stopped inside the displaced bytes (not at their first, which is the jump)
    // continues in the relocated copy, where the same instruction starts.
    for (auto& t : threads) {
        if (t->st != tstate::stopped) {
            continue;
        }
        std::uint64_t pc = read_pc(t->tid_);
        if (pc > pad.site && pc < pad.site + pad.moved.covered) {
            if (auto r = pad.moved.relocated_offset(static_cast<std::uint32_t>(pc - pad.site))) {
                write_pc(t->tid_, pad.relocated + *r);
            }
        }
    }
}

void ptrace_process::impl::move_threads_out_of_pad(const internal::jump_pad& pad) {
    for (auto& t : threads) {
        if (t->st != tstate::stopped) {
            continue;
        }
        std::uint64_t pc = read_pc(t->tid_);
        if (pc >= pad.relocated && pc < pad.relocated + pad.moved.code.size()) {
            if (auto o = pad.moved.original_offset(static_cast<std::uint32_t>(pc - pad.relocated))) {
                write_pc(t->tid_, pad.site + *o);
            }
        }
    }
}

bool ptrace_process::impl::write_stop_slot(const internal::jump_pad& pad, std::uint64_t target) {
    std::array<std::byte, 8> v{};
    for (int i = 0; i < 8; ++i) {
        v[static_cast<std::size_t>(i)] = static_cast<std::byte>(target >> (8 * i));
    }
    return raw_write(pad.stop_slot, v);
}

void ptrace_process::impl::arm_pad(pad_site& p) {
    if (p.armed) {
        return;
    }
    write_stop_slot(p.pad, p.pad.trap);
    if (!raw_write(p.pad.site, p.pad.site_jump)) {
        return;
    }
    p.armed = true;
    lifted_int3.erase(p.pad.site);
    forget_out_of_line(p.pad.site, p.pad.moved.covered);
    move_threads_into_pad(p.pad);
}

void ptrace_process::impl::disarm_pad(pad_site& p) {
    if (!p.armed) {
        return;
    }
    // Best effort, as remove_int3: the process may be gone.
    write_stop_slot(p.pad, p.pad.relocated);
    raw_write(p.pad.site, p.original);
    p.armed = false;
    move_threads_out_of_pad(p.pad);
}

void ptrace_process::impl::retire_pad(std::uint64_t addr) {
    auto it = pads.find(addr);
    if (it == pads.end()) {
        return;
    }
    disarm_pad(it->second);
    retired_pads.push_back(std::move(it->second.pad));
    pads.erase(it);
}

std::optional<std::uint64_t> ptrace_process::impl::alloc_pad(thread_record& t, std::uint64_t near) {
    auto near_enough = [&](std::uint64_t base) { return (base > near ? base - near : near - base) < pad_reach; };
    for (auto& [base, used] : pad_pages) {
        if (near_enough(base) && used + internal::jump_pad_size <= pad_page_size) {
            return base + used;
        }
    }
    // Below the executable's lowest mapping and every scratch page, as the out-of-line
    // slots (out_of_line.cpp says why there); the page is recorded as a full scratch page
    // so that the slots never take it.
    if (auto page = map_scratch_page(t, near, pad_reach)) {
        log::write(log::channel::ptrace, "jump pads: page {:#x} for code near {:#x}", *page, near);
        ool_pages.emplace_back(*page, pad_page_size);
        pad_pages.emplace_back(*page, 0);
        return *page;
    }
    auto page = map_pad_page_near_library(t, near);
    if (page) {
        log::write(log::channel::ptrace, "jump pads: page {:#x} for library code near {:#x}", *page, near);
        pad_pages.emplace_back(*page, 0);
    }
    return page;
}

// A site in a shared library (0x7f...) is out of rel32 reach of the pages below the
// executable (0x55...). Its pads go in a page almost a pad_reach below the site: the
// kernel's top-down allocator places new mappings (libraries, thread stacks, arenas)
// right below the existing ones, so it reaches that far only after about 1 GB of new
// mappings, and then merely steps over one page. Not an out-of-line page (those are
// stacked below the executable, see map_scratch_page).
std::optional<std::uint64_t> ptrace_process::impl::map_pad_page_near_library(thread_record& t, std::uint64_t near) {
    constexpr std::uint64_t mib = 1ull << 20;
    for (std::uint64_t below : {pad_reach - 64 * mib, pad_reach - 128 * mib, pad_reach / 2, 64 * mib}) {
        if (near < below + (1ull << 32)) {
            continue;   // not a library high in the address space
        }
        std::uint64_t hint = (near - below) & ~(pad_page_size - 1);
        if (auto page = inject_mmap(t, hint, pad_page_size); page && *page == hint) {
            return page;
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> ptrace_process::impl::pad_trap_site(std::uint64_t trap, bool& live) {
    for (auto& [addr, p] : pads) {
        if (p.pad.trap == trap) {
            live = p.armed;
            return addr;
        }
    }
    for (auto& pad : retired_pads) {
        if (pad.trap == trap) {
            live = false;
            return pad.site;
        }
    }
    return std::nullopt;
}

bool ptrace_process::impl::handle_pad_trap(thread_record& t, std::uint64_t pc, int si_code) {
    bool live = false;
    auto site = pad_trap_site(pc - 1, live);
    if (!site) {
        return false;
    }
    auto it = sites.find(*site);
    if (live && it != sites.end() && it->second->is_enabled()) {
        // The pad restored every register but rip: the stop is the site's.
        write_pc(t.tid_, *site);
        t.stepping = false;
        t.ool_slot = 0;
        stop_reason r;
        r.kind = stop_kind::breakpoint;
        r.tid = t.tid_;
        r.signo = SIGTRAP;
        r.si_code = si_code;
        r.breakpoint_addr = virt_addr(*site);
        queue_event(r);
        return true;
    }
    // The pad was disarmed after the thread decided to stop: it goes on with the original
    // instructions, relocated in that pad (as a lifted int3's late trap).
    const internal::jump_pad* pad = nullptr;
    if (auto* p = pad_of(*site)) {
        pad = &p->pad;
    }
    for (auto& r : retired_pads) {
        if (r.trap == pc - 1) {
            pad = &r;
        }
    }
    write_pc(t.tid_, pad->relocated);
    t.forget_regs();
    if (t.stepping) {
        t.st = tstate::running;
        internal::try_ptrace(PTRACE_SINGLESTEP, t.tid_, nullptr, nullptr);
    } else if (!stopping_all) {
        cont(t, 0);
    }
    return true;
}

bool ptrace_process::impl::step_over_pad(thread_record& t, std::uint64_t pc) {
    auto* p = pad_of(pc);
    if (p == nullptr || !p->armed) {
        return false;
    }
    // Reported at the site: the condition held there already; run the displaced
    // instructions from the pad without asking again (gdb steps over the breakpoint).
    write_pc(t.tid_, p->pad.relocated);
    t.step_over_pc.reset();
    ++counts.out_of_line;
    return true;
}

void ptrace_process::impl::restore_pads_in_child(pid_t child) {
    for (auto& [addr, p] : pads) {
        if (!p.armed) {
            continue;
        }
        for (std::size_t i = 0; i < p.original.size(); ++i) {
            std::uint64_t a = addr + i;
            auto aligned = a & ~std::uint64_t{7};
            auto peek = internal::try_ptrace(PTRACE_PEEKDATA, child, reinterpret_cast<void*>(aligned), nullptr);
            if (!peek) {
                continue;
            }
            long word = peek.value;
            reinterpret_cast<std::byte*>(&word)[a - aligned] = p.original[i];
            internal::try_ptrace(PTRACE_POKEDATA, child, reinterpret_cast<void*>(aligned), reinterpret_cast<void*>(word));
        }
    }
}

void ptrace_process::impl::mask_pads(std::uint64_t addr, std::span<std::byte> out) {
    for (auto& [site, p] : pads) {
        if (!p.armed) {
            continue;
        }
        for (std::size_t i = 0; i < p.original.size(); ++i) {
            if (site + i >= addr && site + i < addr + out.size()) {
                out[site + i - addr] = p.original[i];
            }
        }
    }
}

std::optional<std::string> ptrace_process::make_site_fast(virt_addr addr, const fast_site_request& req) {
    auto& d = *impl_;
    d.require_stopped();
    std::uint64_t site = addr.addr();
    auto it = d.sites.find(site);
    if (it == d.sites.end() || !it->second->is_enabled()) {
        return "the breakpoint is not planted";
    }
    if (d.pad_of(site) != nullptr) {
        return std::nullopt;
    }
    if (d.vfork_pending || d.others_running) {
        return "the process is not stopped as a whole";
    }
    thread_record* stopped = nullptr;
    for (auto& t : d.threads) {
        if (t->st == tstate::stopped && !t->in_syscall && stopped == nullptr) {
            stopped = t.get();
        }
        if (t->st != tstate::stopped && t->st != tstate::zombie) {
            return "a thread is not stopped";
        }
    }
    if (stopped == nullptr || req.function_end <= site || req.function_start > site) {
        return "no stopped thread or no function around the site";
    }
    // The original bytes of the whole function (our int3s hidden), for the relocation and
    // the check that no branch lands inside the displaced bytes.
    std::vector<std::byte> fn(req.function_end - req.function_start);
    if (try_read_memory(virt_addr(req.function_start), fn) != fn.size()) {
        return "the function's code cannot be read";
    }
    // And the alignment padding after it, which a final `ret` may share with the jump.
    std::array<std::byte, 16> after{};
    std::size_t padding = try_read_memory(virt_addr(req.function_end), after);
    std::vector<std::byte> code(fn);
    code.insert(code.end(), after.begin(), after.begin() + static_cast<long>(padding));
    auto base = d.alloc_pad(*stopped, site);
    if (!base) {
        return "no memory for a pad within 2 GB of the site";
    }
    std::span<const std::byte> at_site(code.data() + (site - req.function_start), code.size() - (site - req.function_start));
    std::optional<internal::native_count> count;
    if (req.counting_control) {
        auto control = req.counting_control->addr();
        auto first = control + offsetof(ompdbg_agent_control, sites);
        if (req.record.addr() >= first && (req.record.addr() - first) % sizeof(ompdbg_agent_site) == 0) {
            count = internal::native_count{control, static_cast<std::uint32_t>((req.record.addr() - first) /
                                                                               sizeof(ompdbg_agent_site))};
        }
    }
    auto plan = internal::build_jump_pad(at_site, site, *base, req.record.addr(), req.evaluate.addr(), req.function_end,
                                      req.condition, count);
    if (!plan.pad) {
        return plan.refusal;
    }
    if (auto why = internal::branch_into(fn, req.function_start, site, site + plan.pad->moved.covered)) {
        return why;
    }
    for (auto& [other, s] : d.sites) {
        if (other > site && other < site + plan.pad->moved.covered && s->is_enabled()) {
            return "another breakpoint is inside the bytes the jump would replace";
        }
    }
    if (!d.raw_write(*base, plan.pad->code)) {
        return "the pad cannot be written";
    }
    for (auto& [b, used] : d.pad_pages) {
        if (b <= *base && *base < b + pad_page_size) {
            used = *base - b + internal::jump_pad_size;
        }
    }
    impl::pad_site p;
    p.original.assign(code.begin() + static_cast<long>(site - req.function_start),
                      code.begin() + static_cast<long>(site - req.function_start + plan.pad->site_jump.size()));
    p.pad = std::move(*plan.pad);
    // The int3 goes, the jump comes: both while every thread is stopped.
    d.remove_int3(*it->second);
    d.lifted_int3.erase(site);
    auto& placed = d.pads.emplace(site, std::move(p)).first->second;
    d.arm_pad(placed);
    if (!placed.armed) {
        d.pads.erase(site);
        d.insert_int3(*it->second);
        return "the jump cannot be written";
    }
    log::write(log::channel::ptrace, "jump pad at {:#x} for site {:#x}{}", placed.pad.base, site,
               placed.pad.native_condition ? " (condition or count in native code)" : "");
    return std::nullopt;
}

void ptrace_process::make_site_slow(virt_addr addr) {
    auto& d = *impl_;
    if (d.pad_of(addr.addr()) == nullptr) {
        return;
    }
    d.retire_pad(addr.addr());
    auto it = d.sites.find(addr.addr());
    if (d.alive && it != d.sites.end() && it->second->is_enabled()) {
        d.insert_int3(*it->second);
    }
}

bool ptrace_process::is_site_fast(virt_addr addr) const {
    auto it = impl_->pads.find(addr.addr());
    return it != impl_->pads.end() && it->second.armed;
}

}  // namespace ompdbg::tracer
