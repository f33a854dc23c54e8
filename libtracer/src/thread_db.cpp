#include "ompdbg/tracer/thread_db.hpp"

// glibc's thread_db.h has no extern "C" guard of its own.
extern "C" {
#include <proc_service.h>
#include <thread_db.h>
}

#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

using ompdbg::tracer::target;

/// The debugger side of glibc's proc_service interface: libthread_db hands it back to every
/// ps_* callback. Owned by thread_db::impl, which outlives the thread agent.
struct ps_prochandle {
    target* tgt = nullptr;
    /// ELF files of modules the target lists without one (opened once; null: unreadable).
    std::map<std::string, std::shared_ptr<ompdbg::dwarf::elf_file>> elves;
};

namespace {

// x86-64 <sys/reg.h> indices libthread_db passes to ps_get_thread_area (not included:
// its one-letter macros would leak into every name below).
constexpr int reg_index_fs = 25;
constexpr int reg_index_gs = 26;

constexpr std::uint64_t r_debug_r_map = 8;   // struct r_debug { int r_version; link_map* r_map; }
// struct link_map's public prefix: l_addr, l_name, l_ld, l_next, l_prev.
constexpr std::uint64_t lm_l_addr = 0, lm_l_name = 8, lm_l_ld = 16, lm_l_next = 24;

ompdbg::tracer::thread* find_thread(ps_prochandle* ph, lwpid_t lwp) {
    return ph && ph->tgt ? ph->tgt->find_thread(lwp) : nullptr;
}

/// Looks `name` up in the symbols of `mod`'s ELF file (the module's load bias applied).
std::optional<std::uint64_t> lookup_in(ps_prochandle* ph, const ompdbg::tracer::loaded_module& mod,
                                       const std::string& name) {
    const ompdbg::dwarf::elf_file* elf = mod.elf.get();
    if (!elf && !mod.path.empty()) {
        auto [it, inserted] = ph->elves.try_emplace(mod.path.string());
        if (inserted) {
            try {
                it->second = ompdbg::dwarf::elf_file::open(mod.path);
            } catch (const std::exception&) {
                // unreadable: no symbols from this module
            }
        }
        elf = it->second.get();
    }
    if (!elf) {
        return std::nullopt;
    }
    if (auto v = ompdbg::tracer::defined_symbol_value(*elf, name)) {
        return *v + mod.load_bias;
    }
    return std::nullopt;
}

/// The symbol `name` in the module whose file name is `object` (libthread_db asks for
/// "libc.so.6", "ld-linux-x86-64.so.2", formerly "libpthread.so.0"), then in any module.
std::optional<std::uint64_t> global_lookup(ps_prochandle* ph, const char* object, const char* name) {
    const auto& mods = ph->tgt->modules();
    if (object) {
        for (auto& m : mods) {
            if (m.path.filename() == object) {
                if (auto v = lookup_in(ph, m, name)) {
                    return v;
                }
            }
        }
    }
    for (auto& m : mods) {
        if (auto v = lookup_in(ph, m, name)) {
            return v;
        }
    }
    return std::nullopt;
}

std::string td_error_name(td_err_e e) {
    switch (e) {
    case TD_OK: return "ok";
    case TD_ERR: return "generic error";
    case TD_NOTHR: return "no thread to satisfy query";
    case TD_NOSV: return "no synchronization handle";
    case TD_NOLWP: return "no LWP to satisfy query";
    case TD_BADPH: return "invalid process handle";
    case TD_BADTH: return "invalid thread handle";
    case TD_BADSH: return "invalid synchronization handle";
    case TD_BADTA: return "invalid thread agent";
    case TD_BADKEY: return "invalid key";
    case TD_NOMSG: return "no event message";
    case TD_NOFPREGS: return "FPU register set not available";
    case TD_NOLIBTHREAD: return "application not linked with libthread";
    case TD_NOEVENT: return "requested event is not supported";
    case TD_NOCAPAB: return "capability not available";
    case TD_DBERR: return "debugger service failed";
    case TD_NOAPLIC: return "operation not applicable";
    case TD_NOTSD: return "no thread-specific data for this thread";
    case TD_MALLOC: return "malloc failed";
    case TD_PARTIALREG: return "only part of register set was written/read";
    case TD_NOXREGS: return "X register set not available for this thread";
    case TD_TLSDEFER: return "Thread-local storage has not been allocated yet";
    case TD_VERSION: return "version mismatch between libthread_db and libpthread";
    case TD_NOTLS: return "the module has no thread-local storage";
    default: return "unknown thread_db error " + std::to_string(static_cast<int>(e));
    }
}

}  // namespace

// ---- proc_service callbacks (glibc proc_service.h). They are called from C code inside
// libthread_db: they never throw, and they answer PS_ERR / PS_NOSYM / PS_BADLID instead.
// (Not marked noexcept: proc_service.h declares them without it, and clang rejects a
// definition whose exception specification differs from the declaration.) ----

extern "C" {

ps_err_e ps_pdread(ps_prochandle* ph, psaddr_t addr, void* buf, size_t size) {
    if (!ph || !ph->tgt || (!buf && size)) {
        return PS_BADADDR;
    }
    try {
        auto out = std::span(static_cast<std::byte*>(buf), size);
        return ph->tgt->try_read_memory(ompdbg::virt_addr(reinterpret_cast<std::uintptr_t>(addr)),
                                        out) == size
                   ? PS_OK
                   : PS_ERR;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_pdwrite(ps_prochandle* ph, psaddr_t addr, const void* buf, size_t size) {
    if (!ph || !ph->tgt || (!buf && size)) {
        return PS_BADADDR;
    }
    try {
        ph->tgt->write_memory(ompdbg::virt_addr(reinterpret_cast<std::uintptr_t>(addr)),
                              std::span(static_cast<const std::byte*>(buf), size));
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_ptread(ps_prochandle* ph, psaddr_t addr, void* buf, size_t size) {
    return ps_pdread(ph, addr, buf, size);
}

ps_err_e ps_ptwrite(ps_prochandle* ph, psaddr_t addr, const void* buf, size_t size) {
    return ps_pdwrite(ph, addr, buf, size);
}

ps_err_e ps_lgetregs(ps_prochandle* ph, lwpid_t lwp, prgregset_t gregs) {
    static_assert(sizeof(prgregset_t) == sizeof(user_regs_struct));
    try {
        auto* th = find_thread(ph, lwp);
        if (!th) {
            return PS_BADLID;
        }
        std::memcpy(gregs, &th->gp_regs(), sizeof(user_regs_struct));
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_lsetregs(ps_prochandle* ph, lwpid_t lwp, const prgregset_t gregs) {
    try {
        auto* th = find_thread(ph, lwp);
        if (!th) {
            return PS_BADLID;
        }
        ompdbg::tracer::registers r = th->regs();
        std::memcpy(&r.gp(), gregs, sizeof(user_regs_struct));
        th->write_regs(r);
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_lgetfpregs(ps_prochandle* ph, lwpid_t lwp, prfpregset_t* fpregs) {
    static_assert(sizeof(prfpregset_t) == sizeof(user_fpregs_struct));
    try {
        auto* th = find_thread(ph, lwp);
        if (!th || !fpregs) {
            return PS_BADLID;
        }
        std::memcpy(fpregs, &th->regs().fp_regs(), sizeof(user_fpregs_struct));
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_lsetfpregs(ps_prochandle*, lwpid_t, const prfpregset_t*) {
    return PS_ERR;   // libthread_db never needs it for what we ask; registers has no fp writer
}

pid_t ps_getpid(ps_prochandle* ph) { return ph && ph->tgt ? ph->tgt->pid() : -1; }

/// x86-64: the thread pointer is FS's base (glibc's DB_THREAD_SELF is
/// CONST_THREAD_AREA(64, FS)), read from the thread's registers, never with arch_prctl, so
/// that core files answer too.
ps_err_e ps_get_thread_area(ps_prochandle* ph, lwpid_t lwp, int idx, psaddr_t* base) {
    try {
        auto* th = find_thread(ph, lwp);
        if (!th || !base) {
            return PS_BADLID;
        }
        const auto& gp = th->gp_regs();
        if (idx == reg_index_fs) {
            *base = reinterpret_cast<psaddr_t>(static_cast<std::uintptr_t>(gp.fs_base));
        } else if (idx == reg_index_gs) {
            *base = reinterpret_cast<psaddr_t>(static_cast<std::uintptr_t>(gp.gs_base));
        } else {
            return PS_BADADDR;
        }
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

ps_err_e ps_pglobal_lookup(ps_prochandle* ph, const char* object, const char* name,
                           psaddr_t* addr) {
    if (!ph || !ph->tgt || !name || !addr) {
        return PS_ERR;
    }
    try {
        auto v = global_lookup(ph, object, name);
        ompdbg::log::write(ompdbg::log::channel::plugin, "thread_db: lookup {}:{} -> {}",
                           object ? object : "*", name, v ? "found" : "not found");
        if (!v) {
            return PS_NOSYM;
        }
        *addr = reinterpret_cast<psaddr_t>(static_cast<std::uintptr_t>(*v));
        return PS_OK;
    } catch (...) {
        return PS_ERR;
    }
}

// Process/LWP control: the debugger keeps the target stopped while it uses libthread_db
// (all-stop), so these have nothing to do.
ps_err_e ps_pstop(ps_prochandle*) { return PS_OK; }
ps_err_e ps_pcontinue(ps_prochandle*) { return PS_OK; }
ps_err_e ps_lstop(ps_prochandle*, lwpid_t) { return PS_OK; }
ps_err_e ps_lcontinue(ps_prochandle*, lwpid_t) { return PS_OK; }

}  // extern "C"

namespace ompdbg::tracer {

struct thread_db::impl {
    ps_prochandle ph;
    td_thragent_t* agent = nullptr;
    /// Whether libthread_db's pthread_t of a thread other than the leader was its FS base
    /// (see pthread_self); nullopt until one was compared.
    std::optional<bool> fs_base_is_pthread;

    ~impl() {
        if (agent) {
            td_ta_delete(agent);
        }
    }

    std::optional<td_thrhandle_t> map(pid_t tid) {
        td_thrhandle_t th{};
        if (td_ta_map_lwp2thr(agent, tid, &th) != TD_OK) {
            return std::nullopt;
        }
        return th;
    }

    /// The module's struct link_map: as the tracer recorded it, or found by walking
    /// _r_debug's list (matching the dynamic section, else the load bias and name).
    std::optional<std::uint64_t> link_map_of(const loaded_module& mod) {
        if (mod.link_map_addr) {
            return mod.link_map_addr;
        }
        auto r_debug = global_lookup(&ph, "ld-linux-x86-64.so.2", "_r_debug");
        if (!r_debug) {
            return std::nullopt;
        }
        target& tgt = *ph.tgt;
        auto lm = tgt.read<std::uint64_t>(virt_addr(*r_debug + r_debug_r_map));
        for (int i = 0; lm != 0 && i < 4096; ++i) {
            auto l_addr = tgt.read<std::uint64_t>(virt_addr(lm + lm_l_addr));
            auto l_ld = tgt.read<std::uint64_t>(virt_addr(lm + lm_l_ld));
            if (mod.l_ld != 0 ? l_ld == mod.l_ld
                              : (i == 0 ? mod.is_executable
                                        : !mod.is_executable && l_addr == mod.load_bias &&
                                              same_file(tgt, lm, mod))) {
                return lm;
            }
            lm = tgt.read<std::uint64_t>(virt_addr(lm + lm_l_next));
        }
        return std::nullopt;
    }

    /// nptl publishes its layout as `_thread_db_<struct>_<field>` = {size in bits,
    /// element count, byte offset} (glibc nptl_db/structs.def).
    struct db_desc {
        std::uint32_t bits, nelem, offset;
    };
    db_desc desc(const char* name) {
        auto addr = global_lookup(&ph, "libc.so.6", name);
        if (!addr) {
            error::send(std::string("thread_db: no ") + name);
        }
        return ph.tgt->read<db_desc>(virt_addr(*addr));
    }

    /// pthread_getspecific(key) of the thread whose struct pthread is at `pd`:
    /// pd->specific[key / L2][key % L2] is {seq, data}, valid while seq equals
    /// __pthread_keys[key].seq (odd: key in use).
    std::optional<std::uint64_t> tsd_from_descriptors(std::uint64_t pd, unsigned key) {
        target& tgt = *ph.tgt;
        auto keys_desc = desc("_thread_db___pthread_keys");
        auto keys = global_lookup(&ph, "libc.so.6", "__pthread_keys");
        if (!keys || key >= keys_desc.nelem || keys_desc.bits % 8 != 0) {
            return std::nullopt;
        }
        auto key_seq_desc = desc("_thread_db_pthread_key_struct_seq");
        auto key_seq = tgt.read<std::uint64_t>(
            virt_addr(*keys + std::uint64_t(key) * (keys_desc.bits / 8) + key_seq_desc.offset));
        if ((key_seq & 1) == 0) {
            return std::nullopt;   // key not in use
        }
        auto level2 = desc("_thread_db_pthread_key_data_level2_data");
        auto specific = desc("_thread_db_pthread_specific");
        if (level2.nelem == 0 || level2.bits % 8 != 0 || key / level2.nelem >= specific.nelem) {
            return std::nullopt;
        }
        auto block = tgt.read<std::uint64_t>(
            virt_addr(pd + specific.offset + std::uint64_t(key / level2.nelem) * 8));
        if (block == 0) {
            return std::nullopt;   // never set in this thread
        }
        std::uint64_t entry = block + std::uint64_t(key % level2.nelem) * (level2.bits / 8);
        auto seq = tgt.read<std::uint64_t>(virt_addr(entry + desc("_thread_db_pthread_key_data_seq").offset));
        if (seq != key_seq) {
            return std::nullopt;   // a value of a deleted key
        }
        return tgt.read<std::uint64_t>(virt_addr(entry + desc("_thread_db_pthread_key_data_data").offset));
    }

    static bool same_file(target& tgt, std::uint64_t lm, const loaded_module& mod) {
        auto name_ptr = tgt.read<std::uint64_t>(virt_addr(lm + lm_l_name));
        std::array<std::byte, 4096> buf{};
        std::size_t n = tgt.try_read_memory(virt_addr(name_ptr), std::span(buf).first(buf.size() - 1));
        std::string name(reinterpret_cast<const char*>(buf.data()), strnlen(reinterpret_cast<const char*>(buf.data()), n));
        return !name.empty() && std::filesystem::path(name).filename() == mod.path.filename();
    }
};

thread_db::thread_db() : impl_(std::make_unique<impl>()) {}
thread_db::~thread_db() = default;

std::unique_ptr<thread_db> thread_db::open(target& tgt, std::string* why) {
    static std::once_flag init_once;
    static td_err_e init_rc = TD_OK;
    std::call_once(init_once, [] { init_rc = td_init(); });
    auto fail = [&](const std::string& reason) -> std::unique_ptr<thread_db> {
        if (why) {
            *why = reason;
        }
        return nullptr;
    };
    if (init_rc != TD_OK) {
        return fail("libthread_db: td_init failed: " + td_error_name(init_rc));
    }
    std::unique_ptr<thread_db> db(new thread_db());
    db->impl_->ph.tgt = &tgt;
    td_err_e rc = td_ta_new(&db->impl_->ph, &db->impl_->agent);
    if (rc != TD_OK) {
        db->impl_->agent = nullptr;
        if (rc == TD_NOLIBTHREAD) {
            return fail("libthread_db: the program's thread library (libc's nptl) is not loaded yet");
        }
        if (rc == TD_VERSION) {
            return fail("libthread_db: version mismatch with the program's libc");
        }
        return fail("libthread_db: td_ta_new failed: " + td_error_name(rc));
    }
    return db;
}

std::uint64_t thread_db::tls_address(pid_t tid, const loaded_module& module, std::uint64_t offset) {
    std::string where = "Cannot find thread-local storage for LWP " + std::to_string(tid) +
                        (module.is_executable ? ", executable file " : ", shared library ") +
                        module.path.string() + ": ";
    auto th = impl_->map(tid);
    if (!th) {
        error::send(where + "libthread_db does not know this thread");
    }
    std::optional<std::uint64_t> lm;
    try {
        lm = impl_->link_map_of(module);
    } catch (const std::exception&) {   // the list is unreadable: same answer as absent
        lm.reset();
    }
    if (!lm) {
        error::send(where + "the module is not in the dynamic linker's list");
    }
    psaddr_t addr = nullptr;
    td_err_e rc = td_thr_tls_get_addr(&*th, reinterpret_cast<psaddr_t>(static_cast<std::uintptr_t>(*lm)),
                                      static_cast<std::size_t>(offset), &addr);
    if (rc != TD_OK) {
        error::send(where + td_error_name(rc));
    }
    return reinterpret_cast<std::uintptr_t>(addr);
}

// x86-64 glibc: pthread_t is the thread pointer, FS's base (td_ta_map_lwp2thr takes it from
// ps_get_thread_area, td_thr_get_info answers it back after reading the whole struct
// pthread). Asking libthread_db costs a read of __stack_user, the thread's registers and
// that struct for every new thread; once it gave FS's base for one thread other than the
// leader, the others are answered from their registers alone. The leader always asks:
// before libc set its TLS up, libthread_db answers a descriptor of its own. Any doubt (no
// FS base, registers unreadable, a mismatch) goes to libthread_db.
std::optional<std::uint64_t> thread_db::pthread_self(pid_t tid) {
    target& tgt = *impl_->ph.tgt;
    auto fs_base = [&]() -> std::uint64_t {
        try {
            thread* th = tgt.find_thread(tid);
            return th ? static_cast<std::uint64_t>(th->gp_regs().fs_base) : 0;
        } catch (const std::exception&) {   // running or gone: libthread_db says what it can
            return 0;
        }
    };
    const bool leader = tid == tgt.pid();
    if (!leader && impl_->fs_base_is_pthread.value_or(false)) {
        if (std::uint64_t fs = fs_base(); fs != 0) {
            return fs;
        }
    }
    auto th = impl_->map(tid);
    if (!th) {
        return std::nullopt;
    }
    td_thrinfo_t info{};
    if (td_thr_get_info(&*th, &info) != TD_OK) {
        return std::nullopt;
    }
    auto self = static_cast<std::uint64_t>(info.ti_tid);
    if (!leader && !impl_->fs_base_is_pthread && self != 0) {
        impl_->fs_base_is_pthread = fs_base() == self;
        log::write(log::channel::plugin, "thread_db: pthread_t of LWP {} is {}its FS base", tid,
                   *impl_->fs_base_is_pthread ? "" : "not ");
    }
    return self;
}

std::optional<std::uint64_t> thread_db::tsd(pid_t tid, unsigned key) {
    auto th = impl_->map(tid);
    if (!th) {
        return std::nullopt;
    }
    void* data = nullptr;
    td_err_e rc = td_thr_tsd(&*th, key, &data);
    if (rc == TD_DBERR) {
        // glibc >= 2.34's td_thr_tsd reads __pthread_keys[key] as one scalar although its
        // descriptor says 128-bit elements, and always fails with TD_DBERR (gdb never calls
        // it). Do the same walk ourselves with nptl's own layout descriptors.
        try {
            return impl_->tsd_from_descriptors(reinterpret_cast<std::uintptr_t>(th->th_unique), key);
        } catch (const std::exception&) {   // unreadable memory: no value
            return std::nullopt;
        }
    }
    if (rc != TD_OK) {
        log::write(log::channel::plugin, "thread_db: td_thr_tsd({}, {}): {}", tid, key,
                   td_error_name(rc));
        return std::nullopt;
    }
    return reinterpret_cast<std::uintptr_t>(data);
}

}  // namespace ompdbg::tracer
