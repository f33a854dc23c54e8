#pragma once
/// The OMPD host: loads LLVM's libompd (OpenMP 5.1 §20, omp-tools.h), hands it our callback
/// table (memory, symbols, TLS, threads on libtracer + libdwarfview) and offers its
/// inquiries as C++: threads, parallel regions, tasks, states and ICVs of one target.
///
/// Ownership: an `ompd_library` is shared (std::shared_ptr) by the address spaces that use
/// it; an `ompd_address_space` must outlive every omp_thread/omp_parallel/omp_task it made.
/// Handles are released through ompd_rel_*_handle when the last copy goes away.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/target.hpp"

// Opaque OMPD handle types (omp-tools.h names them with these tags).
struct _ompd_aspace_handle;
struct _ompd_thread_handle;
struct _ompd_parallel_handle;
struct _ompd_task_handle;
struct _ompd_aspace_cont;

namespace ompdbg::plugins {

namespace internal {
struct ompd_api;
}

/// The name of an ompd_rc_t code as the spec spells it ("ompd_rc_stale_handle");
/// "ompd_rc_<N>" for a code the spec does not define.
std::string ompd_rc_name(int rc);

/// OMPD API versions this host implements the callbacks of (OpenMP 5.0 to 5.2).
inline constexpr std::int64_t ompd_min_api_version = 201811;
inline constexpr std::int64_t ompd_max_api_version = 202111;

/// A loaded and initialised libompd.
class ompd_library {
public:
    /// Loads `file` under `policy`, resolves every entry point (naming the first missing
    /// one), checks ompd_get_api_version against what we implement, then ompd_initialize.
    /// The same file is loaded and initialised only once per debugger. Throws ompdbg::error
    /// with one line naming the file and the problem.
    static std::shared_ptr<ompd_library> load(const std::filesystem::path& file,
                                              const plugin_policy& policy);
    ~ompd_library();

    const std::filesystem::path& path() const { return lib_->path(); }
    std::int64_t api_version() const { return api_version_; }
    const std::string& version_string() const { return version_string_; }
    const internal::ompd_api& api() const { return *api_; }

private:
    /// load() of a file not loaded yet: open, check the version, initialise.
    static std::shared_ptr<ompd_library> load_new(const std::filesystem::path& file, const plugin_policy& policy);
    ompd_library() = default;
    std::unique_ptr<plugin_library> lib_;
    std::unique_ptr<internal::ompd_api> api_;
    std::int64_t api_version_ = 0;
    std::string version_string_;
};

/// What kind of OpenMP runtime a target uses, and whether it can be debugged through OMPD.
struct omp_runtime_probe {
    enum class kind {
        none,               ///< no OpenMP runtime mapped (yet)
        llvm_ompd,          ///< LLVM/Intel libomp with the OMPD symbols
        llvm_without_ompd,  ///< libomp without ompd_* symbols (e.g. Debian's stripped one)
        gnu_libgomp,        ///< GNU libgomp: no OMPD at all
    };
    kind what = kind::none;
    std::filesystem::path runtime_path;      ///< the runtime's module path
    std::uint64_t load_bias = 0;
    /// The strings of `ompd_dll_locations` (empty until the runtime filled it: with
    /// OMP_DEBUG=enabled, during its initialisation).
    std::vector<std::string> dll_locations;
    /// `ompd_state` != 0: the runtime runs with OMP_DEBUG=enabled.
    bool debug_enabled = false;
    /// Run-time addresses of the runtime's event locations (`ompd_dll_locations_valid`,
    /// `ompd_bp_parallel_begin`, ...), by symbol name.
    std::map<std::string, virt_addr> event_addresses;
    /// One line for the user when OMPD cannot be used (empty for llvm_ompd).
    std::string problem;
};

/// Inspects the target's modules and the runtime's `ompd_*` variables. Never throws.
omp_runtime_probe probe_openmp_runtime(tracer::target& tgt);

/// Where the debugger looks for a library the runtime names in ompd_dll_locations, in order:
/// an absolute `name` as it is; a bare name next to the runtime (`runtime_path`'s
/// directory), then in each directory of the debugger's LD_LIBRARY_PATH. The files need not
/// exist. load_ompd_library and `ompdbg doctor` share this rule.
std::vector<std::filesystem::path> resolve_ompd_location(const std::filesystem::path& runtime_path,
                                                         const std::string& name);

/// Loads the first library of `probe.dll_locations` that the policy allows and that loads
/// (a bare name is looked up next to the runtime, then in LD_LIBRARY_PATH), else `fallback`
/// (--ompd-library / set ompd-library). Throws ompdbg::error listing why each candidate
/// was rejected.
std::shared_ptr<ompd_library> load_ompd_library(const omp_runtime_probe& probe,
                                                const plugin_policy& policy,
                                                const std::optional<std::filesystem::path>& fallback);

/// Computes the run-time address of `offset` in `module`'s TLS block for thread `tid`
/// (the app passes libthread_db's answer); nullopt when it cannot.
using tls_resolver =
    std::function<std::optional<std::uint64_t>(pid_t tid, const tracer::loaded_module& module,
                                               std::uint64_t offset)>;

enum class omp_scope { address_space = 2, thread = 3, parallel = 4, implicit_task = 5, task = 6 };
std::string_view omp_scope_name(omp_scope s);

class ompd_address_space;

/// An OpenMP thread, parallel region or task: shared ownership of an OMPD handle.
struct omp_thread {
    std::shared_ptr<_ompd_thread_handle> handle;
};
struct omp_parallel {
    std::shared_ptr<_ompd_parallel_handle> handle;
};
struct omp_task {
    std::shared_ptr<_ompd_task_handle> handle;
};

struct omp_icv {
    std::uint64_t id;
    std::string name;
    omp_scope scope;
};

/// An ICV's value: a number, or text (run-sched-var "static,0"), or why it is unavailable.
struct omp_icv_value {
    std::optional<std::int64_t> number;
    std::optional<std::string> text;
    int rc = 0;  ///< ompd_rc_t of the last call
    /// The value as ompdbg prints it (number, else text, else the rc name).
    std::string to_string() const;
};

struct omp_task_frame {
    std::uint64_t exit_frame = 0, enter_frame = 0;
    std::int64_t exit_flag = 0, enter_flag = 0;
};

/// libompd's view of one target (ompd_process_initialize). Callbacks read through `tgt`.
class ompd_address_space {
public:
    /// Throws ompdbg::error "ompd_process_initialize: <rc name>" (e.g. when the runtime is
    /// not initialised yet, or lacks OMPD symbols).
    ompd_address_space(std::shared_ptr<ompd_library> lib, tracer::target& tgt, tls_resolver tls);
    ~ompd_address_space();
    ompd_address_space(const ompd_address_space&) = delete;
    ompd_address_space& operator=(const ompd_address_space&) = delete;

    ompd_library& library() { return *lib_; }
    tracer::target& target() { return tgt_; }

    /// Drops what is only valid while the target does not run (symbol cache survives
    /// unless the module list changed). Call after every resume.
    void invalidate();

    // ---- threads ----
    /// The OpenMP thread running on OS thread `tid`; nullopt when it is not one.
    std::optional<omp_thread> thread_of(pid_t tid);
    /// OS thread (LWP) of an OpenMP thread, found through its pthread_t.
    std::optional<pid_t> os_thread_of(const omp_thread& t);
    /// (state, wait id) — ompd_get_state.
    std::pair<std::int64_t, std::uint64_t> state(const omp_thread& t);
    /// Name of a state value (ompd_enumerate_states), "state 0x.." when unknown.
    std::string state_name(std::int64_t state);
    std::optional<omp_parallel> current_parallel(const omp_thread& t);
    std::optional<omp_task> current_task(const omp_thread& t);

    // ---- parallel regions ----
    std::optional<omp_parallel> enclosing_parallel(const omp_parallel& p);
    std::optional<omp_thread> thread_in_parallel(const omp_parallel& p, int thread_num);
    std::optional<omp_task> task_in_parallel(const omp_parallel& p, int thread_num);
    bool same(const omp_parallel& a, const omp_parallel& b);

    // ---- tasks ----
    std::optional<omp_task> generating_task(const omp_task& t);
    std::optional<omp_task> scheduling_task(const omp_task& t);
    std::optional<omp_parallel> task_parallel(const omp_task& t);
    std::optional<std::uint64_t> task_function(const omp_task& t);
    std::optional<omp_task_frame> task_frame(const omp_task& t);
    bool same(const omp_task& a, const omp_task& b);
    bool same(const omp_thread& a, const omp_thread& b);

    // ---- ICVs ----
    const std::vector<omp_icv>& icvs();
    std::optional<omp_icv> find_icv(std::string_view name);
    omp_icv_value icv(const omp_icv& icv);                        ///< address-space scope
    omp_icv_value icv(const omp_thread& t, const omp_icv& icv);
    omp_icv_value icv(const omp_parallel& p, const omp_icv& icv);
    omp_icv_value icv(const omp_task& t, const omp_icv& icv);
    /// Numeric ICV by name at a handle's scope (e.g. "team-size-var" of a parallel region).
    template <typename Handle>
    std::optional<std::int64_t> icv_number(const Handle& h, std::string_view name) {
        auto i = find_icv(name);
        return i ? icv(h, *i).number : std::nullopt;
    }
    std::optional<std::int64_t> omp_version();

    // ---- devices ----
    /// ompd_device_initialize (OpenMP 5.1 §20.5.2.2) for offload device `id` of `kind`
    /// (an OMPD_DEVICE_KIND_* value), as a tool does when the runtime announces a device at
    /// ompd_bp_device_begin. ompdbg debugs the host device only: a device address space the
    /// plugin creates is released at once. Returns the plugin's ompd_rc_t (LLVM's libompd
    /// answers ompd_rc_unavailable for a device it does not know).
    int initialize_device(std::uint64_t kind, std::uint64_t id);

    /// For tests that call the callbacks as libompd does: this address space's context
    /// (an ompd_address_space_context_t*) and the callback table (an ompd_callbacks_t*).
    void* context_for_testing();
    static const void* callbacks_for_testing();

    // ---- used by the C callbacks (internal) ----
    struct impl;
    impl& internals() { return *impl_; }

private:
    std::shared_ptr<ompd_library> lib_;
    tracer::target& tgt_;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::plugins
