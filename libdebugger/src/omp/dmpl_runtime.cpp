// The OpenMP runtime of the target and its DMPL library: which runtime a target maps, the
// DMPL library of the session (ompdbg's own for libomp or libgomp, or `set dmpl-library`),
// its view of each process, and where a thread stands in its team (OMPD, or libgomp's own
// per-thread data), and a thread's copy of a threadprivate variable.

#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "omp/dmpl_process.hpp"
#include "session/plugin_trust_host.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/omp/gomp_team_reader.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/thread_db.hpp"

#ifndef OMPDBG_DMPL_PLUGIN_DIR
#define OMPDBG_DMPL_PLUGIN_DIR ""
#endif

namespace ompdbg::debugger {

namespace fs = std::filesystem;

namespace {

/// DMPL state of one session (`session::model_state()`): the setting and the loaded
/// library.
struct dmpl_library_state {
    std::optional<fs::path> library_setting;
    std::shared_ptr<plugins::dmpl_library> library;
};

/// DMPL state of one process (`inferior::model_state`): the library's view of its target
/// (rebuilt when the target changes), and an OMPD view for thread numbers.
struct dmpl_process_state {
    std::unique_ptr<plugins::dmpl_process> proc;
    const tracer::target* proc_target = nullptr;
    pid_t proc_pid = 0;
    std::unique_ptr<plugins::ompd_address_space> ompd;
    const tracer::target* ompd_target = nullptr;
    pid_t ompd_pid = 0;
};

dmpl_library_state& library_state(session& s) {
    return s.model_state().get<dmpl_library_state>();
}

/// The state of the current inferior's process.
dmpl_process_state& process_state(session& s) {
    return s.current_inferior().model_state.get<dmpl_process_state>();
}

fs::path default_library(runtime_kind k) {
    fs::path dir(OMPDBG_DMPL_PLUGIN_DIR);
    return dir / (k == runtime_kind::libgomp ? "libdmpl-libgomp.so" : "libdmpl-libomp.so");
}

}  // namespace

runtime_info find_runtime(tracer::target& tgt) {
    runtime_info r;
    for (const auto& m : tgt.modules()) {
        std::string f = m.path.filename().string();
        if (f.starts_with("libomp.so") || f.starts_with("libiomp5")) {
            return {runtime_kind::libomp, &m};
        }
        if (f.starts_with("libgomp.so")) {
            return {runtime_kind::libgomp, &m};
        }
    }
    return r;
}

runtime_kind runtime_of(session& s) {
    tracer::target* tgt = s.target();
    return tgt == nullptr ? runtime_kind::none : find_runtime(*tgt).kind;
}

plugins::dmpl_process* dmpl_for(session& s, bool required) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        if (required) {
            error::send("The program is not being run.");
        }
        return nullptr;
    }
    dmpl_process_state& st = process_state(s);
    if (st.proc && st.proc_target == tgt && st.proc_pid == tgt->pid()) {
        st.proc->forget_exited_threads();
        return st.proc.get();
    }
    st.proc.reset();
    runtime_info rt = find_runtime(*tgt);
    if (rt.kind == runtime_kind::none) {
        if (required) {
            error::send("no OpenMP runtime is loaded in the program (yet)");
        }
        return nullptr;
    }
    dmpl_library_state& lib = library_state(s);
    if (!lib.library) {
        fs::path file = lib.library_setting ? *lib.library_setting : default_library(rt.kind);
        lib.library = plugins::dmpl_library::load(file, plugin_host_policy(s.plugin_policy()));
    }
    plugins::pthread_key_reader keys = [&s](pid_t tid, std::uint64_t key) -> std::optional<std::uint64_t> {
        try {
            if (tracer::thread_db* tdb = s.thread_db()) {
                return tdb->tsd(tid, static_cast<unsigned>(key));
            }
        } catch (const std::exception& e) {
            log::write(log::channel::plugin, "td_thr_tsd: {}", e.what());
        }
        return std::nullopt;
    };
    st.proc = std::make_unique<plugins::dmpl_process>(lib.library, *tgt, std::move(keys));
    st.proc_target = tgt;
    st.proc_pid = tgt->pid();
    return st.proc.get();
}

plugins::dmpl_process* dmpl_quiet(session& s) {
    try {
        return dmpl_for(s, false);
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "DMPL: {}", e.what());
        return nullptr;
    }
}

void forget_dmpl_view(session& s) {
    process_state(s).proc.reset();
}

std::optional<std::pair<std::int64_t, std::int64_t>> omp_position(session& s, pid_t tid, int levels_out) {
    try {
        tracer::target* tgt = s.target();
        if (tgt == nullptr) {
            return std::nullopt;
        }
        if (runtime_info rt = find_runtime(*tgt); rt.kind == runtime_kind::libgomp && rt.module != nullptr) {
            if (levels_out > 0) {
                return std::nullopt;   // libgomp's enclosing team states are beyond its exported code
            }
            if (auto place = gomp_team_reader(*tgt, *rt.module).of(tid)) {
                return std::make_pair(place->thread_num, place->team_size);
            }
            return std::nullopt;
        }
        dmpl_process_state& st = process_state(s);
        if (!st.ompd || st.ompd_target != tgt || st.ompd_pid != tgt->pid()) {
            st.ompd.reset();
            auto probe = plugins::probe_openmp_runtime(*tgt);
            if (probe.what != plugins::omp_runtime_probe::kind::llvm_ompd || !probe.debug_enabled) {
                return std::nullopt;
            }
            auto lib = plugins::load_ompd_library(probe, plugin_host_policy(s.plugin_policy()), std::nullopt);
            plugins::tls_resolver tls = [&s](pid_t t, const tracer::loaded_module& m,
                                             std::uint64_t off) -> std::optional<std::uint64_t> {
                try {
                    if (tracer::thread_db* tdb = s.thread_db()) {
                        return tdb->tls_address(t, m, off);
                    }
                } catch (const std::exception&) {
                }
                return std::nullopt;
            };
            st.ompd = std::make_unique<plugins::ompd_address_space>(lib, *tgt, std::move(tls));
            st.ompd_target = tgt;
            st.ompd_pid = tgt->pid();
        }
        st.ompd->invalidate();
        auto t = st.ompd->thread_of(tid);
        if (!t) {
            return std::nullopt;
        }
        auto par = st.ompd->current_parallel(*t);
        if (levels_out == 0) {
            auto num = st.ompd->icv_number(*t, "thread-num-var");
            auto team = par ? st.ompd->icv_number(*par, "team-size-var") : std::nullopt;
            if (!num || !team) {
                return std::nullopt;
            }
            return std::make_pair(*num, *team);
        }
        for (int k = 0; k < levels_out && par; ++k) {
            par = st.ompd->enclosing_parallel(*par);
        }
        auto team = par ? st.ompd->icv_number(*par, "team-size-var") : std::nullopt;
        if (!team || *team <= 0 || *team > 4096) {
            return std::nullopt;
        }
        for (int member = 0; member < *team; ++member) {
            if (auto m = st.ompd->thread_in_parallel(*par, member); m && st.ompd->same(*m, *t)) {
                return std::make_pair(std::int64_t{member}, *team);
            }
        }
        return std::nullopt;
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "OMPD for DMPL: {}", e.what());
        return std::nullopt;
    }
}

void dmpl_set_library(session& s, const std::string& path) {
    if (path.empty()) {
        error::send("Argument required (path of a DMPL library).");
    }
    dmpl_library_state& st = library_state(s);
    st.library_setting = fs::path(path);
    for (auto& inf : s.inferiors()) {
        if (auto* p = inf->model_state.find<dmpl_process_state>()) {
            p->proc.reset();
        }
    }
    st.library.reset();
}

dwarf::value dmpl_thread_copy(session& s, pid_t tid, const std::string& name, dwarf::value v) {
    if (!v.address || tid == 0 || s.target() == nullptr) {
        return v;
    }
    plugins::dmpl_process* proc = dmpl_quiet(s);
    if (proc == nullptr) {
        return v;
    }
    auto a = proc->tls_address(tid, *v.address);
    if (a.rc == DMPL_tls_native || (a.rc == DMPL_ok && a.address == *v.address)) {
        return v;
    }
    if (a.rc == DMPL_tls_unallocated) {
        error::send(fmt::format("Thread {} has not allocated its copy of threadprivate `{}' yet "
                                "(DMPL_tls_unallocated)",
                                s.thread_number(tid), name));
    }
    if (a.rc != DMPL_ok) {
        error::send(a.message);
    }
    std::vector<std::byte> bytes(v.val_type.size());
    if (s.target()->try_read_memory(virt_addr(a.address), bytes) != bytes.size()) {
        error::send(fmt::format("Cannot access memory at address {:#x}", a.address));
    }
    v.address = a.address;
    v.bytes = std::move(bytes);
    return v;
}

dmpl_library_info dmpl_library_of(session& s) {
    const plugins::dmpl_library& lib = dmpl_for(s, true)->library();
    dmpl_library_info info{lib.path().string(), lib.version_string(), lib.compatibility(), lib.initialiser(), {}};
    if (auto n = lib.rtl_names(DMPL_lang_c)) {
        info.rtl_names = std::make_pair(n->main_task_dispatcher, n->microtask_invoker);
    }
    return info;
}

void require_dmpl(session& s) {
    dmpl_for(s, true);
}

}  // namespace ompdbg::debugger
