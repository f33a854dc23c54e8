// Finding, loading and initialising libompd (OpenMP 5.1 §20.2: ompd_dll_locations,
// ompd_dll_locations_valid; §20.5.1: ompd_initialize, ompd_get_api_version).

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "internal/ompd_api.hpp"
#include "internal/ompd_contexts.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace ompdbg::plugins {

namespace fs = std::filesystem;

std::string ompd_rc_name(int rc) {
    switch (rc) {
        case ompd_rc_ok: return "ompd_rc_ok";
        case ompd_rc_unavailable: return "ompd_rc_unavailable";
        case ompd_rc_stale_handle: return "ompd_rc_stale_handle";
        case ompd_rc_bad_input: return "ompd_rc_bad_input";
        case ompd_rc_error: return "ompd_rc_error";
        case ompd_rc_unsupported: return "ompd_rc_unsupported";
        case ompd_rc_needs_state_tracking: return "ompd_rc_needs_state_tracking";
        case ompd_rc_incompatible: return "ompd_rc_incompatible";
        case ompd_rc_device_read_error: return "ompd_rc_device_read_error";
        case ompd_rc_device_write_error: return "ompd_rc_device_write_error";
        case ompd_rc_nomem: return "ompd_rc_nomem";
        case ompd_rc_incomplete: return "ompd_rc_incomplete";
        case ompd_rc_callback_error: return "ompd_rc_callback_error";
        default: return "ompd_rc_" + std::to_string(rc);
    }
}

std::string_view omp_scope_name(omp_scope s) {
    switch (s) {
        case omp_scope::address_space: return "address_space";
        case omp_scope::thread: return "thread";
        case omp_scope::parallel: return "parallel";
        case omp_scope::implicit_task: return "implicit_task";
        case omp_scope::task: return "task";
    }
    return "unknown";
}

ompd_library::~ompd_library() = default;

std::shared_ptr<ompd_library> ompd_library::load(const fs::path& file, const plugin_policy& policy) {
    return load_once<ompd_library>(file, [&] { return load_new(file, policy); });
}

std::shared_ptr<ompd_library> ompd_library::load_new(const fs::path& file, const plugin_policy& policy) {
    std::shared_ptr<ompd_library> lib(new ompd_library());
    lib->api_ = std::make_unique<internal::ompd_api>();
    lib->lib_ = plugin_library::open_api(file, policy, *lib->api_, "an OMPD library");
    const auto& api = *lib->api_;
    ompd_word_t version = 0;
    if (int rc = api.ompd_get_api_version(&version); rc != ompd_rc_ok) {
        error::send(lib->path().string() + ": ompd_get_api_version failed: " + ompd_rc_name(rc));
    }
    if (version < ompd_min_api_version || version > ompd_max_api_version) {
        error::send(lib->path().string() + ": OMPD API version " + std::to_string(version) +
                    " is not supported (ompdbg implements " + std::to_string(ompd_min_api_version) +
                    " to " + std::to_string(ompd_max_api_version) + ", OpenMP 5.0 to 5.2)");
    }
    lib->api_version_ = version;
    const char* vs = nullptr;
    if (api.ompd_get_version_string(&vs) == ompd_rc_ok && vs != nullptr) {
        lib->version_string_ = vs;
    }
    if (int rc = api.ompd_initialize(version, &internal::ompd_callback_table()); rc != ompd_rc_ok) {
        error::send(lib->path().string() + ": ompd_initialize failed: " + ompd_rc_name(rc));
    }
    log::write(log::channel::plugin, "OMPD {} (API {}) from {}", lib->version_string_, version,
               lib->path().string());
    return lib;
}

namespace {

std::optional<dwarf::symbol> find_one(const dwarf::elf_file& elf, std::string_view name) {
    for (const auto& s : elf.find_symbols(name)) {
        if (s.value != 0) {
            return s;
        }
    }
    return std::nullopt;
}

bool name_starts(const fs::path& p, std::string_view prefix) {
    return p.filename().string().rfind(prefix, 0) == 0;
}

}  // namespace

namespace internal {

std::shared_ptr<dwarf::elf_file> elf_of(const tracer::loaded_module& m) {
    if (m.elf) {
        return m.elf;
    }
    static std::mutex mutex;
    static std::map<fs::path, std::shared_ptr<dwarf::elf_file>> cache;
    std::lock_guard lock(mutex);
    auto& slot = cache[m.path];
    if (!slot) {
        try {
            slot = dwarf::elf_file::open(m.path);
        } catch (const std::exception& e) {
            log::write(log::channel::plugin, "{}", e.what());
            return nullptr;
        }
    }
    return slot;
}

}  // namespace internal

omp_runtime_probe probe_openmp_runtime(tracer::target& tgt) {
    omp_runtime_probe probe;
    try {
        for (const auto& m : tgt.modules()) {
            auto elf = internal::elf_of(m);
            if (!elf) {
                continue;
            }
            // An OMPD runtime announces itself by ompd_dll_locations, whatever its file name
            // (libomp.so, libiomp5.so, or linked statically into the executable).
            if (auto locs = find_one(*elf, "ompd_dll_locations")) {
                probe.what = omp_runtime_probe::kind::llvm_ompd;
                probe.runtime_path = m.path;
                probe.load_bias = m.load_bias;
                for (const char* ev : {"ompd_dll_locations_valid", "ompd_bp_parallel_begin",
                                       "ompd_bp_parallel_end", "ompd_bp_task_begin",
                                       "ompd_bp_task_end", "ompd_bp_thread_begin",
                                       "ompd_bp_thread_end", "ompd_bp_device_begin"}) {
                    if (auto s = find_one(*elf, ev)) {
                        probe.event_addresses[ev] = m.to_runtime(s->value);
                    }
                }
                if (auto st = find_one(*elf, "ompd_state")) {
                    std::uint64_t v = 0;
                    auto n = tgt.try_read_memory(m.to_runtime(st->value),
                                                 std::as_writable_bytes(std::span(&v, 1)));
                    probe.debug_enabled = n == sizeof v && v != 0;
                }
                std::uint64_t array = 0;
                if (tgt.try_read_memory(m.to_runtime(locs->value),
                                        std::as_writable_bytes(std::span(&array, 1))) == 8 &&
                    array != 0) {
                    for (int i = 0; i < 16; ++i) {
                        std::uint64_t p = 0;
                        if (tgt.try_read_memory(virt_addr(array + 8 * i),
                                                std::as_writable_bytes(std::span(&p, 1))) != 8 ||
                            p == 0) {
                            break;
                        }
                        probe.dll_locations.push_back(tgt.read_string(virt_addr(p), 4096));
                    }
                }
                if (!probe.debug_enabled) {
                    probe.problem = "the OpenMP runtime " + m.path.string() +
                                    " runs without OMPD support enabled: start the program with "
                                    "OMP_DEBUG=enabled in its environment (ompdbg run sets it for you)";
                }
                return probe;
            }
            if (name_starts(m.path, "libgomp")) {
                probe.what = omp_runtime_probe::kind::gnu_libgomp;
                probe.runtime_path = m.path;
                probe.problem = "this program uses GNU libgomp (" + m.path.string() +
                                "), which has no OMPD support; build it with clang -fopenmp "
                                "against an OMPD-enabled libomp, or use ompdbg's DMPL support "
                                "for libgomp";
            } else if (probe.what == omp_runtime_probe::kind::none &&
                       (name_starts(m.path, "libomp.so") || name_starts(m.path, "libiomp5"))) {
                probe.what = omp_runtime_probe::kind::llvm_without_ompd;
                probe.runtime_path = m.path;
                probe.problem = m.path.string() +
                                " has no OMPD support: it lacks the symbol ompd_dll_locations "
                                "(a stripped or non-OMPD build); use an OMPD-enabled libomp such as "
                                "the one scripts/bootstrap builds";
            }
        }
        if (probe.what == omp_runtime_probe::kind::none) {
            probe.problem = "no OpenMP runtime is loaded in the program (yet)";
        }
    } catch (const std::exception& e) {
        probe.problem = e.what();
    }
    return probe;
}

std::vector<fs::path> resolve_ompd_location(const fs::path& runtime_path, const std::string& name) {
    fs::path p(name);
    if (p.is_absolute()) {
        return {p};
    }
    // A bare name: where the runtime lives first, then the debugger's library path (the
    // loader is never asked to search, so the policy sees the real file).
    std::vector<fs::path> out;
    if (!runtime_path.empty()) {
        out.push_back(runtime_path.parent_path() / p);
    }
    if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
        std::stringstream ss(llp);
        std::string dir;
        while (std::getline(ss, dir, ':')) {
            if (!dir.empty()) {
                out.push_back(fs::path(dir) / p);
            }
        }
    }
    return out;
}

std::shared_ptr<ompd_library> load_ompd_library(const omp_runtime_probe& probe,
                                                const plugin_policy& policy,
                                                const std::optional<fs::path>& fallback) {
    std::vector<fs::path> candidates;
    for (const auto& loc : probe.dll_locations) {
        for (auto& c : resolve_ompd_location(probe.runtime_path, loc)) {
            candidates.push_back(std::move(c));
        }
    }
    if (fallback) {
        candidates.push_back(*fallback);
    }
    std::string why;
    for (const auto& c : candidates) {
        std::error_code ec;
        if (!fs::exists(c, ec)) {
            continue;
        }
        try {
            return ompd_library::load(c, policy);
        } catch (const error& e) {
            log::write(log::channel::plugin, "{}", e.what());
            if (why.empty()) {
                why = e.what();
            }
        }
    }
    if (!why.empty()) {
        error::send(why);
    }
    std::string tried;
    for (const auto& l : probe.dll_locations) {
        tried += (tried.empty() ? "" : ", ") + l;
    }
    error::send("no OMPD library found" + (tried.empty() ? std::string() : " (the runtime names " + tried + ")") +
                "; name one with 'set ompd-library PATH' or --ompd-library PATH");
}

}  // namespace ompdbg::plugins
