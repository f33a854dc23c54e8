#pragma once
/// A target is one address space with threads: a live process, a core file, later a remote
/// gdbserver. Everything above libtracer talks to `target`, never to ptrace directly.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/registers.hpp"

namespace ompdbg::tracer {

/// An ELF object mapped into a target: the executable or a shared library.
struct loaded_module {
    std::filesystem::path path;
    std::uint64_t load_bias = 0;     ///< l_addr: run-time address = file address + bias
    std::uint64_t link_map_addr = 0; ///< its struct link_map in the target (0: unknown); thread_db
                                     ///< finds it through _r_debug when 0
    std::uint64_t l_ld = 0;          ///< address of its dynamic section (0 for the exe if unknown)
    bool is_executable = false;
    std::shared_ptr<dwarf::elf_file> elf;   ///< from the target's elf_provider; null when the
                                            ///< file cannot be opened
    std::uint64_t tls_modid = 0;     ///< l_tls_modid, 0 when it has no TLS (or unknown)
    std::uint64_t start = 0, end = 0; ///< run-time address range its file maps ([start, end))

    virt_addr to_runtime(std::uint64_t file_addr) const { return virt_addr(file_addr + load_bias); }
    std::uint64_t to_file(virt_addr a) const { return a.addr() - load_bias; }
};

/// Opens the ELF file of a module, or hands out the caller's shared copy (apps keeps one
/// cache for every process). Returns null or throws when the file cannot be read; libtracer
/// then leaves `loaded_module::elf` null. An empty provider opens files with
/// `dwarf::elf_file::open`.
using elf_provider = std::function<std::shared_ptr<dwarf::elf_file>(const std::filesystem::path&)>;

/// The symbol `name` defined in `elf` (a global definition first, .dynsym before .symtab):
/// its file address. What libthread_db and the loader interface look up.
std::optional<std::uint64_t> defined_symbol_value(const dwarf::elf_file& elf, std::string_view name);

enum class thread_state { stopped, running, exited };

/// One thread of a target.
class thread {
public:
    virtual ~thread() = default;
    virtual pid_t tid() const = 0;
    /// Name from /proc/PID/task/TID/comm (or the core's prpsinfo); empty if unknown.
    virtual std::string name() const = 0;
    virtual thread_state state() const = 0;
    /// Registers (cached until the thread resumes). Throws if the thread is gone.
    virtual const registers& regs() = 0;
    /// The general-purpose registers alone (cached like regs()): what libthread_db and the
    /// thread pointer need. A live thread reads them without its FP and vector state, two
    /// more system calls that a new thread's announcement has no use for.
    virtual const user_regs_struct& gp_regs() { return regs().gp(); }
    /// Writes registers back (live targets only; throws on cores).
    virtual void write_regs(const registers& r) = 0;
};

class target {
public:
    virtual ~target() = default;

    virtual pid_t pid() const = 0;
    virtual bool is_live() const = 0;
    /// The executable's path (from /proc/PID/exe or the command line).
    virtual std::filesystem::path executable() const = 0;

    /// Reads exactly out.size() bytes; throws "Cannot access memory at address 0x..".
    virtual void read_memory(virt_addr addr, std::span<std::byte> out) = 0;
    /// Reads as many bytes as are readable from addr; returns the count (0 if none).
    virtual std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) = 0;
    /// Writes (live only; breakpoint bytes are kept consistent: writing over a planted int3
    /// updates the saved byte). Throws on failure / on cores.
    virtual void write_memory(virt_addr addr, std::span<const std::byte> data) = 0;

    /// Threads in creation order (the main thread first).
    virtual std::vector<thread*> threads() = 0;
    virtual thread* find_thread(pid_t tid) = 0;

    /// The executable and every shared object (vdso excluded), executable first.
    virtual const std::vector<loaded_module>& modules() = 0;
    /// The module containing a run-time address.
    const loaded_module* module_at(virt_addr addr);
    /// The vdso's run-time range [first, second) (not in modules()), nullopt if unknown.
    /// Default: the "[vdso]" line of /proc/PID/maps for a live target.
    virtual std::optional<std::pair<std::uint64_t, std::uint64_t>> vdso_range();

    /// Forgets what a live target keeps from earlier reads while it is stopped and that may
    /// have changed without it running: memory shared with processes we do not stop
    /// (another MPI rank's shared-memory segment). A process keeps its private pages until
    /// it runs (every resume empties its page cache). The app calls it before each command.
    virtual void forget_cached_memory() {}

    /// Changes whenever a thread of the target may have run since it was last read (every
    /// resume, step and interrupt; never for a core file). What only running code can
    /// change (a thread's TLS block addresses) may be cached while it stays the same.
    virtual std::uint64_t resume_count() const { return 0; }

    /// Convenience: read a T (trivially copyable).
    template <typename T>
    T read(virt_addr addr) {
        T v;
        read_memory(addr, std::as_writable_bytes(std::span(&v, 1)));
        return v;
    }
    /// Reads a NUL-terminated string of at most `max` bytes.
    std::string read_string(virt_addr addr, std::size_t max = 4096);
};

}  // namespace ompdbg::tracer
