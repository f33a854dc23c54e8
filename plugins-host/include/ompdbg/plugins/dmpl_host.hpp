#pragma once
/// The DMPL host: loads a DMPL library (dmpl.h; ompdbg's own plugins/dmpl-libomp and
/// plugins/dmpl-libgomp, or a vendor's), hands it the 15 callbacks of the paper plus
/// ompdbg's two type callbacks (memory, symbols, DWARF types, pthread keys on libtracer and
/// libdwarfview), and offers its entry points as C++: runtime routine names, demangling of
/// outlined routines and their variables, each thread's copy of a threadprivate object.
///
/// Ownership: a `dmpl_library` is shared (std::shared_ptr) by the `dmpl_process`es that use
/// it; a `dmpl_process` (one target) must outlive nothing else: it releases its DMPL
/// process/thread info through DMPL_destroy_* when destroyed.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::plugins {

namespace internal {
struct dmpl_api;
}

/// The name of a DMPL result code as dmpl.h spells it ("DMPL_tls_unallocated");
/// "DMPL code <N>" for a code dmpl.h does not define.
std::string dmpl_rc_name(int rc);

/// The runtime routines of DMPL_get_rtl_names.
struct dmpl_rtl_names {
    std::string main_task_dispatcher;  ///< what the encountering thread calls (__kmpc_fork_call)
    std::string microtask_invoker;     ///< what calls the outlined routine (__kmp_invoke_microtask)
};

/// The answer of DMPL_demangle_name.
struct dmpl_demangled {
    int rc = 0;             ///< DMPL_ok, DMPL_name_unchanged, DMPL_name_internal, ...
    std::string name;       ///< the demangled name (the input when unchanged)
    int varinfo = 0;        ///< DMPL_varinfo_* (with DMPL_varinfo_needs_dereference)
    int decl_line = 0;
};

/// "shared", "private", "firstprivate", ... for a varinfo code (the dereference bit
/// ignored); empty for DMPL_varinfo_none.
std::string dmpl_varinfo_name(int varinfo);

/// A loaded and initialised DMPL library.
class dmpl_library {
public:
    /// Loads `file` under `policy`; resolves every entry point of dmpl.h (DMPL_initialise or
    /// DMPL_initialize), naming the first missing one; checks DMPL_version_compatibility()
    /// == XLD_INTERFACE_COMPATIBILITY; calls the initialiser with the host's callback table.
    /// One instance per file per debugger. Throws ompdbg::error with one line naming the file
    /// and the problem.
    static std::shared_ptr<dmpl_library> load(const std::filesystem::path& file,
                                              const plugin_policy& policy);
    ~dmpl_library();

    const std::filesystem::path& path() const;
    /// DMPL_version_string(), or "" when it returned null.
    const std::string& version_string() const { return version_string_; }
    int compatibility() const { return compatibility_; }
    /// Which initialiser the library exports ("DMPL_initialise" or "DMPL_initialize").
    const std::string& initialiser() const { return initialiser_; }

    /// DMPL_error_string(rc) when the library names it, else dmpl_rc_name(rc). Never throws.
    std::string error_string(int rc) const;
    /// DMPL_get_rtl_names(language); nullopt when the library returns null or no names.
    std::optional<dmpl_rtl_names> rtl_names(int language) const;
    /// DMPL_ompdbg_reduction_routines(language) (dmpl.h, 6.): empty when the library does
    /// not export it or returns null.
    std::vector<std::string> reduction_routines(int language) const;
    /// DMPL_demangle_name with the buffer grown once when the library asks for more
    /// (DMPL_name_too_long). `hints`: DMPL_hint_* bits passed in *flags. Never throws; a
    /// misbehaving library gives rc != DMPL_ok and the input name.
    dmpl_demangled demangle(std::string_view mangled, int hints = 0) const;

    const internal::dmpl_api& api() const { return *api_; }

private:
    /// load() of a file not loaded yet: open, check the version, initialise.
    static std::shared_ptr<dmpl_library> load_new(const std::filesystem::path& file, const plugin_policy& policy);
    dmpl_library();
    std::unique_ptr<plugin_library> lib_;
    std::unique_ptr<internal::dmpl_api> api_;
    std::string version_string_;
    std::string initialiser_;
    int compatibility_ = 0;
};

/// Reads the value of pthread key `key` in thread `tid` (the app passes libthread_db's
/// td_thr_tsd); nullopt when there is none.
using pthread_key_reader = std::function<std::optional<std::uint64_t>(pid_t tid, std::uint64_t key)>;

/// Where one thread's copy of a threadprivate object is.
struct dmpl_tls_answer {
    int rc = 0;                 ///< DMPL_ok, DMPL_tls_unallocated, DMPL_tls_native, or an error
    std::uint64_t address = 0;  ///< with DMPL_ok: the thread's copy
    std::string message;        ///< with any other rc: one line for the user
};

/// A DMPL library's view of one target: the DMPL_process_t and DMPL_thread_t handles its
/// callbacks receive, and the process/thread info the library attaches to them.
class dmpl_process {
public:
    dmpl_process(std::shared_ptr<dmpl_library> lib, tracer::target& tgt, pthread_key_reader keys);
    ~dmpl_process();
    dmpl_process(const dmpl_process&) = delete;
    dmpl_process& operator=(const dmpl_process&) = delete;

    dmpl_library& library() { return *lib_; }
    tracer::target& target() { return tgt_; }

    /// DMPL_get_tls_address(thread `tid`, `in_addr`). Never throws: a library error comes
    /// back as rc and message ("DMPL_get_tls_address: <error string>").
    dmpl_tls_answer tls_address(pid_t tid, std::uint64_t in_addr);

    /// Destroys the thread info of threads that no longer exist. Call after every stop.
    void forget_exited_threads();

    /// For tests that call the callbacks as a DMPL library does: this process's handle
    /// (a DMPL_process_t*), a thread's handle (DMPL_thread_t*), the callback table
    /// (a DMPL_callbacks_t*).
    void* process_handle_for_testing();
    void* thread_handle_for_testing(pid_t tid);
    static const void* callbacks_for_testing();

    struct impl;
    impl& internals() { return *impl_; }

private:
    std::shared_ptr<dmpl_library> lib_;
    tracer::target& tgt_;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::plugins
