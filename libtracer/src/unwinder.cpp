#include "ompdbg/tracer/unwinder.hpp"

#include <libunwind.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include "internal/unwinder_tables.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

// libunwind exports its .eh_frame_hdr binary search for remote address spaces but does not
// declare it in a public header (it is what _UPT_find_proc_info ends with).
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
                                                  unw_dyn_info_t* di, unw_proc_info_t* pi,
                                                  int need_unwind_info, void* arg);

namespace ompdbg::tracer {

namespace {

constexpr int dwarf_reg_count = 17;   // rax..r15, rip (x86-64 psABI numbering)
constexpr int dwarf_rbp = 6;
constexpr int dwarf_rsp = 7;
constexpr int dwarf_rip = 16;
// Callee-saved registers a caller frame can recover (rbx, rbp, r12-r15).
constexpr std::array<int, 6> callee_saved = {3, 6, 12, 13, 14, 15};
// A frame-pointer step may not jump further than this up the stack.
constexpr std::uint64_t max_fp_frame_size = 16ULL << 20;

/// DWARF register number (== libunwind's UNW_X86_64_* number) → value in `r`.
std::optional<std::uint64_t> dwarf_reg(const user_regs_struct& r, int regno) {
    switch (regno) {
    case 0: return r.rax;
    case 1: return r.rdx;
    case 2: return r.rcx;
    case 3: return r.rbx;
    case 4: return r.rsi;
    case 5: return r.rdi;
    case 6: return r.rbp;
    case 7: return r.rsp;
    case 8: return r.r8;
    case 9: return r.r9;
    case 10: return r.r10;
    case 11: return r.r11;
    case 12: return r.r12;
    case 13: return r.r13;
    case 14: return r.r14;
    case 15: return r.r15;
    case 16: return r.rip;
    default: return std::nullopt;
    }
}

void set_dwarf_reg(user_regs_struct& r, int regno, std::uint64_t v) {
    switch (regno) {
    case 0: r.rax = v; break;
    case 1: r.rdx = v; break;
    case 2: r.rcx = v; break;
    case 3: r.rbx = v; break;
    case 4: r.rsi = v; break;
    case 5: r.rdi = v; break;
    case 6: r.rbp = v; break;
    case 7: r.rsp = v; break;
    case 8: r.r8 = v; break;
    case 9: r.r9 = v; break;
    case 10: r.r10 = v; break;
    case 11: r.r11 = v; break;
    case 12: r.r12 = v; break;
    case 13: r.r13 = v; break;
    case 14: r.r14 = v; break;
    case 15: r.r15 = v; break;
    case 16: r.rip = v; break;
    default: break;
    }
}

/// Memory read during one backtrace call, in 512-byte blocks: libunwind asks word by word,
/// and the thread is stopped for the whole call, so nothing can change under us.
class block_cache {
public:
    explicit block_cache(target& tgt) : tgt_(tgt) {}

    bool read(std::uint64_t addr, void* out, std::size_t size) {
        auto* dst = static_cast<std::byte*>(out);
        while (size > 0) {
            std::uint64_t base = addr & ~(block_size - 1);
            const block& b = fetch(base);
            std::size_t off = addr - base;
            std::size_t n = std::min<std::size_t>(size, block_size - off);
            if (off + n > b.valid) {
                return false;
            }
            std::memcpy(dst, b.data.data() + off, n);
            dst += n;
            addr += n;
            size -= n;
        }
        return true;
    }

private:
    static constexpr std::uint64_t block_size = 512;
    struct block {
        std::array<std::byte, block_size> data;
        std::size_t valid = 0;
    };

    const block& fetch(std::uint64_t base) {
        auto [it, inserted] = blocks_.try_emplace(base);
        if (inserted) {
            it->second.valid = tgt_.try_read_memory(virt_addr(base), it->second.data);
        }
        return it->second;
    }

    target& tgt_;
    std::unordered_map<std::uint64_t, block> blocks_;
};

}  // namespace

struct unwinder::impl {
    explicit impl(target& t) : tgt(&t) {
        accessors.find_proc_info = &find_proc_info;
        accessors.put_unwind_info = &put_unwind_info;
        accessors.get_dyn_info_list_addr = &get_dyn_info_list_addr;
        accessors.access_mem = &access_mem;
        accessors.access_reg = &access_reg;
        accessors.access_fpreg = &access_fpreg;
        accessors.resume = &resume;
        accessors.get_proc_name = &get_proc_name;
        as = unw_create_addr_space(&accessors, 0);
        if (!as) {
            error::send("libunwind: cannot create an address space");
        }
        unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
    }
    ~impl() { unw_destroy_addr_space(as); }

    /// State of one backtrace call, handed to libunwind as the accessors' `arg`.
    struct call {
        impl* self;
        block_cache memory;
        user_regs_struct regs;   // registers the cursor starts from
    };

    struct module_entry {
        std::string path;
        std::uint64_t bias;
        bool loaded = false;
        std::optional<detail::unwind_table> table;
    };

    target* tgt;
    unw_accessors_t accessors{};
    unw_addr_space_t as = nullptr;
    std::vector<module_entry> modules;
    bool vdso_loaded = false;
    std::optional<detail::unwind_table> vdso;

    /// Compares the target's module list with ours; on a change the tables and libunwind's
    /// caches (keyed by ip only) are dropped.
    void refresh_modules() {
        const auto& mods = tgt->modules();
        bool same = mods.size() == modules.size();
        for (std::size_t i = 0; same && i < mods.size(); ++i) {
            same = mods[i].load_bias == modules[i].bias && mods[i].path == modules[i].path;
        }
        if (same) {
            return;
        }
        modules.clear();
        cfi_cache.clear();
        for (auto& m : mods) {
            modules.push_back({m.path.string(), m.load_bias, false, std::nullopt});
        }
        unw_flush_cache(as, 0, 0);
    }

    void reset() {
        modules.clear();
        cfi_cache.clear();
        vdso_loaded = false;
        vdso.reset();
        unw_flush_cache(as, 0, 0);
    }

    /// The vdso is not in modules(); the target knows its range (/proc/PID/maps, a core's
    /// auxv); its image is read out of memory.
    void load_vdso(call& c) {
        vdso_loaded = true;
        auto range = tgt->vdso_range();
        if (!range) {
            return;
        }
        auto [start, end] = *range;
        if (end <= start || end - start > (1ULL << 20)) {
            return;
        }
        std::vector<std::byte> image(end - start);
        if (!c.memory.read(start, image.data(), image.size())) {
            return;
        }
        vdso = detail::read_unwind_table_image(image, start);
    }

    const detail::unwind_table* table_for(std::uint64_t ip, call& c) {
        for (auto& m : modules) {
            if (!m.loaded) {
                m.loaded = true;
                m.table = detail::read_unwind_table(m.path, m.bias);
                log::write(log::channel::unwind, "unwind table of {}: {}", m.path,
                           m.table && m.table->fde_count ? std::to_string(m.table->fde_count) + " FDEs"
                                                          : std::string("none"));
            }
            if (m.table && m.table->contains(ip)) {
                return &*m.table;
            }
        }
        if (!vdso_loaded) {
            load_vdso(c);
        }
        if (vdso && vdso->contains(ip)) {
            return &*vdso;
        }
        return nullptr;
    }

    /// True when `ip` can be code: inside an executable segment of a known image, or at
    /// least readable (JIT code, images we could not open).
    bool is_code(std::uint64_t ip, call& c) {
        if (ip == 0) {
            return false;
        }
        if (auto* t = table_for(ip, c)) {
            return t->is_executable(ip);
        }
        std::byte b;
        return c.memory.read(ip, &b, 1);
    }

    // ---- libunwind accessors (C callbacks: never throw) ----

    static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi,
                              int need_unwind_info, void* arg) noexcept {
        auto& c = *static_cast<call*>(arg);
        try {
            const detail::unwind_table* t = c.self->table_for(ip, c);
            if (!t || t->table_data == 0) {
                return -UNW_ENOINFO;
            }
            unw_dyn_info_t di{};
            di.start_ip = t->exec_start();
            di.end_ip = t->exec_end();
            di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
            di.u.rti.name_ptr = 0;
            di.u.rti.segbase = t->eh_frame_hdr;
            // libunwind counts the table in words; each entry is two 4-byte offsets.
            di.u.rti.table_len = t->fde_count * 8 / sizeof(unw_word_t);
            di.u.rti.table_data = t->table_data;
            return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
        } catch (...) {
            return -UNW_ENOINFO;
        }
    }

    static void put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) noexcept {
        // Table-format unwind info is owned and freed by libunwind itself.
    }

    static int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) noexcept {
        return -UNW_ENOINFO;   // no dynamically registered (JIT) unwind info
    }

    static int access_mem(unw_addr_space_t, unw_word_t addr, unw_word_t* valp, int write,
                          void* arg) noexcept {
        if (write) {
            return -UNW_EINVAL;   // unwinding never writes the target
        }
        auto& c = *static_cast<call*>(arg);
        try {
            return c.memory.read(addr, valp, sizeof *valp) ? 0 : -UNW_EINVAL;
        } catch (...) {
            return -UNW_EINVAL;
        }
    }

    static int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* valp, int write,
                          void* arg) noexcept {
        if (write) {
            return -UNW_EREADONLYREG;
        }
        auto& c = *static_cast<call*>(arg);
        auto v = dwarf_reg(c.regs, reg);
        if (!v) {
            return -UNW_EBADREG;
        }
        *valp = *v;
        return 0;
    }

    static int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) noexcept {
        return -UNW_EBADREG;
    }

    static int resume(unw_addr_space_t, unw_cursor_t*, void*) noexcept { return -UNW_EINVAL; }

    static int get_proc_name(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*,
                             void*) noexcept {
        return -UNW_ENOINFO;   // symbolization is libdwarfview's job
    }

    // ---- the walk ----

    std::vector<frame> backtrace(pid_t tid, std::size_t max_frames, const registers* from = nullptr);
    bool has_cfi(std::uint64_t ip, call& c);
    bool is_sigtramp(std::uint64_t pc, call& c);
    bool fallback_step(call& c, frame& callee, frame& out, user_regs_struct& regs);
    void make_caller(frame& callee, frame& out, user_regs_struct& regs, std::uint64_t ret,
                     std::uint64_t caller_sp, std::optional<std::uint64_t> caller_rbp);

    std::unordered_map<std::uint64_t, bool> cfi_cache;   // ip -> covered by an FDE
};

bool unwinder::impl::has_cfi(std::uint64_t ip, call& c) {
    auto [it, inserted] = cfi_cache.try_emplace(ip, false);
    if (inserted) {
        unw_proc_info_t pi{};
        it->second = find_proc_info(as, ip, &pi, 0, &c) == 0;
    }
    return it->second;
}

// glibc's x86-64 signal return trampoline (__restore_rt) is `mov $15, %rax; syscall`
// (rt_sigreturn); gdb recognises signal frames the same way. The pc may also sit on the
// syscall itself when the trampoline is frame 0.
bool unwinder::impl::is_sigtramp(std::uint64_t pc, call& c) {
    static constexpr std::uint8_t code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    std::uint8_t buf[9];
    for (std::uint64_t start : {pc, pc - 7}) {
        if (c.memory.read(start, buf, sizeof buf) && std::memcmp(buf, code, sizeof code) == 0) {
            return true;
        }
    }
    return false;
}

void unwinder::impl::make_caller(frame& callee, frame& out, user_regs_struct& regs,
                                 std::uint64_t ret, std::uint64_t caller_sp,
                                 std::optional<std::uint64_t> caller_rbp) {
    callee.cfa = virt_addr(caller_sp);
    out = frame{};
    out.pc = virt_addr(ret);
    out.sp = virt_addr(caller_sp);
    out.cfa = out.sp;
    out.is_caller_frame = true;
    out.dwarf_regs.assign(dwarf_reg_count, std::nullopt);
    out.dwarf_regs[dwarf_rip] = ret;
    out.dwarf_regs[dwarf_rsp] = caller_sp;
    out.dwarf_regs[dwarf_rbp] = caller_rbp;
    // The cursor restarts from these; registers we cannot know keep the callee's values
    // (libunwind needs some value) but are not reported.
    regs.rip = ret;
    regs.rsp = caller_sp;
    if (caller_rbp) {
        regs.rbp = *caller_rbp;
    }
}

// Steps from a frame that no CFI covers (JIT code, objects built without unwind tables).
// Where the pc is exact (frame 0, or the frame a signal interrupted) the function may not
// have set up its frame yet, or never will (a leaf): like gdb's prologue analysis, find the
// function's start through the direct call that [sp] returns to, and see whether the pc is
// before or after its `push %rbp; mov %rsp,%rbp`. Otherwise follow the rbp chain: [rbp] is
// the caller's rbp and [rbp+8] the return address. Every value is sanity-checked: the new
// frame must be higher on the stack, within a plausible distance, at a code address.
bool unwinder::impl::fallback_step(call& c, frame& callee, frame& out, user_regs_struct& regs) {
    const std::uint64_t sp = callee.sp.addr();
    const std::uint64_t pc = callee.pc.addr();
    if (!callee.is_caller_frame) {
        std::uint64_t ret0 = 0;
        std::uint8_t call_insn[5];
        if (c.memory.read(sp, &ret0, sizeof ret0) && is_code(ret0, c) &&
            c.memory.read(ret0 - 5, call_insn, sizeof call_insn) && call_insn[0] == 0xe8) {
            std::int32_t rel = 0;
            std::memcpy(&rel, call_insn + 1, sizeof rel);
            std::uint64_t fn = ret0 + static_cast<std::int64_t>(rel);
            std::uint8_t code[32];
            if (fn <= pc && pc - fn < (1ULL << 20) && c.memory.read(fn, code, sizeof code)) {
                std::size_t i = 0;
                if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) {
                    i = 4;   // endbr64
                }
                if (code[i] != 0x55) {
                    // No `push %rbp`: a frameless function, the return address is at [sp].
                    make_caller(callee, out, regs, ret0, sp + 8, callee.dwarf_regs[dwarf_rbp]);
                    return true;
                }
                std::uint64_t push_end = fn + i + 1;
                std::uint64_t mov_end = 0;
                for (std::size_t j = i + 1; j + 3 <= sizeof code && j < i + 17; ++j) {
                    if (code[j] == 0x48 && ((code[j + 1] == 0x89 && code[j + 2] == 0xe5) ||
                                            (code[j + 1] == 0x8b && code[j + 2] == 0xec))) {
                        mov_end = fn + j + 3;
                        break;
                    }
                }
                if (pc < push_end) {
                    make_caller(callee, out, regs, ret0, sp + 8, callee.dwarf_regs[dwarf_rbp]);
                    return true;
                }
                if (mov_end == 0 || pc < mov_end) {
                    std::uint64_t saved[2];
                    if (!c.memory.read(sp, saved, sizeof saved) || !is_code(saved[1], c)) {
                        return false;
                    }
                    make_caller(callee, out, regs, saved[1], sp + 16, saved[0]);
                    return true;
                }
            }
        }
    }
    auto rbp = callee.dwarf_regs[dwarf_rbp];
    if (!rbp || *rbp % 8 != 0 || *rbp < sp || *rbp - sp > max_fp_frame_size) {
        return false;
    }
    std::uint64_t saved[2];
    if (!c.memory.read(*rbp, saved, sizeof saved) || !is_code(saved[1], c)) {
        return false;
    }
    make_caller(callee, out, regs, saved[1], *rbp + 16, saved[0]);
    return true;
}

std::vector<frame> unwinder::impl::backtrace(pid_t tid, std::size_t max_frames, const registers* from) {
    thread* th = tgt->find_thread(tid);
    if (!th) {
        error::send("Unknown thread " + std::to_string(tid) + ".");
    }
    call c{this, block_cache(*tgt), from != nullptr ? from->gp() : th->regs().gp()};
    refresh_modules();

    std::vector<frame> frames;
    if (max_frames == 0) {
        return frames;
    }
    frame top;
    top.pc = virt_addr(c.regs.rip);
    top.sp = virt_addr(c.regs.rsp);
    top.cfa = top.sp;
    for (int r = 0; r < dwarf_reg_count; ++r) {
        top.dwarf_regs.push_back(dwarf_reg(c.regs, r));
    }
    frames.push_back(std::move(top));

    unw_cursor_t cursor;
    bool have_cursor = unw_init_remote(&cursor, as, &c) == 0;
    // One frame more than asked: stepping out of the last frame is what gives its CFA
    // (backtrace(tgt, tid, 1) is how callers ask for frame 0's CFA).
    while (frames.size() <= max_frames) {
        frame& cur = frames.back();
        cur.is_signal_frame = is_sigtramp(cur.pc.addr(), c);
        bool use_cfi = have_cursor && (cur.is_signal_frame || has_cfi(cur.lookup_pc().addr(), c));
        if (use_cfi) {
            int rc = unw_step(&cursor);
            if (rc == 0) {
                break;   // the outermost frame (CFI marks the return address undefined)
            }
            if (rc > 0) {
                unw_word_t ip = 0, sp = 0;
                unw_get_reg(&cursor, UNW_REG_IP, &ip);
                unw_get_reg(&cursor, UNW_REG_SP, &sp);
                // The CFA must grow, except across a signal frame (sigaltstack).
                bool sane = is_code(ip, c) &&
                            (cur.is_signal_frame ? sp != cur.sp.addr() : sp > cur.sp.addr());
                if (sane) {
                    cur.cfa = virt_addr(sp);
                    frame next;
                    next.pc = virt_addr(ip);
                    next.sp = virt_addr(sp);
                    next.cfa = next.sp;
                    next.is_caller_frame = !cur.is_signal_frame;
                    next.dwarf_regs.assign(dwarf_reg_count, std::nullopt);
                    // After a signal frame every register comes from the sigcontext.
                    auto recoverable = [&](int r) {
                        return cur.is_signal_frame ||
                               std::find(callee_saved.begin(), callee_saved.end(), r) !=
                                   callee_saved.end();
                    };
                    for (int r = 0; r < dwarf_reg_count; ++r) {
                        unw_word_t v = 0;
                        if (recoverable(r) && unw_get_reg(&cursor, r, &v) == 0) {
                            next.dwarf_regs[r] = v;
                        }
                    }
                    next.dwarf_regs[dwarf_rsp] = sp;
                    next.dwarf_regs[dwarf_rip] = ip;
                    // Keep the registers a fallback restart would begin from.
                    for (int r = 0; r < dwarf_reg_count; ++r) {
                        if (next.dwarf_regs[r]) {
                            set_dwarf_reg(c.regs, r, *next.dwarf_regs[r]);
                        }
                    }
                    frames.push_back(std::move(next));
                    continue;
                }
                log::write(log::channel::unwind,
                           "libunwind step from {:#x} gave pc {:#x} sp {:#x}: rejected",
                           cur.pc.addr(), ip, sp);
                if (ip == 0) {
                    break;   // end of the chain as the code marks it (e.g. _start's rbp 0)
                }
            } else {
                log::write(log::channel::unwind, "libunwind step from {:#x} failed ({})",
                           cur.pc.addr(), rc);
            }
        }
        // No CFI, or its step failed: our fallback, then restart libunwind there.
        frame next;
        if (!fallback_step(c, cur, next, c.regs)) {
            break;
        }
        log::write(log::channel::unwind, "fallback step {:#x} -> {:#x}", cur.pc.addr(),
                   next.pc.addr());
        frames.push_back(std::move(next));
        have_cursor = unw_init_remote(&cursor, as, &c) == 0;
    }
    if (frames.size() > max_frames) {
        frames.resize(max_frames);
    }
    return frames;
}

unwinder::unwinder(target& tgt) : impl_(std::make_unique<impl>(tgt)) {}
unwinder::~unwinder() = default;

std::vector<frame> unwinder::backtrace(pid_t tid, std::size_t max_frames) {
    return impl_->backtrace(tid, max_frames);
}

std::vector<frame> unwinder::backtrace_from(pid_t tid, const registers& from, std::size_t max_frames) {
    return impl_->backtrace(tid, max_frames, &from);
}

void unwinder::invalidate() { impl_->reset(); }

namespace {

// A few recently used unwinders, so that repeated backtraces of one target (every thread of
// `thread apply all bt`, every stop) reuse libunwind's caches. The key includes the pid, so
// a new target at a recycled address starts fresh; the target pointer itself is refreshed on
// every call and never dereferenced between calls.
struct cached_unwinder {
    const target* tgt;
    pid_t pid;
    std::unique_ptr<unwinder> uw;
};
std::mutex cache_mutex;
std::list<cached_unwinder> cache;
constexpr std::size_t cache_limit = 16;

// The unwinder of `tgt` from the cache (cache_mutex held), made on first use.
unwinder& cached_for(target& tgt) {
    auto it = std::find_if(cache.begin(), cache.end(),
                           [&](auto& e) { return e.tgt == &tgt && e.pid == tgt.pid(); });
    if (it == cache.end()) {
        cache.push_front({&tgt, tgt.pid(), std::make_unique<unwinder>(tgt)});
        if (cache.size() > cache_limit) {
            cache.pop_back();
        }
        it = cache.begin();
    } else if (it != cache.begin()) {
        cache.splice(cache.begin(), cache, it);
        it = cache.begin();
    }
    return *it->uw;
}

}  // namespace

std::vector<frame> backtrace(target& tgt, pid_t tid, std::size_t max_frames) {
    std::lock_guard lock(cache_mutex);
    return cached_for(tgt).backtrace(tid, max_frames);
}

std::vector<frame> backtrace_from(target& tgt, pid_t tid, const registers& from, std::size_t max_frames) {
    std::lock_guard lock(cache_mutex);
    return cached_for(tgt).backtrace_from(tid, from, max_frames);
}

}  // namespace ompdbg::tracer
