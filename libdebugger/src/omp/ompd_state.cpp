// The OMPD state of a session and of its processes (ompd_state.hpp).

#include "omp/ompd_state.hpp"
#include "omp/ompd_tls.hpp"
#include "session/plugin_trust_host.hpp"

#include <system_error>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::debugger::ompd {

namespace fs = std::filesystem;

omp_library_state& library_state(session& s) {
    return s.model_state().get<omp_library_state>();
}

omp_process_state& process_state(session& s) {
    return s.current_inferior().model_state.get<omp_process_state>();
}

void forget_address_spaces(session& s) {
    for (auto& inf : s.inferiors()) {
        if (auto* st = inf->model_state.find<omp_process_state>()) {
            st->aspace.reset();
        }
    }
}

void ensure_library(omp_library_state& st, const plugins::omp_runtime_probe& probe,
                    const plugins::plugin_policy& policy) {
    if (st.library) {
        return;
    }
    st.library = plugins::load_ompd_library(probe, policy, st.ompd_library_setting);
    std::error_code ec;
    bool fallback = st.ompd_library_setting && fs::equivalent(*st.ompd_library_setting, st.library->path(), ec);
    st.library_source = fallback ? "set ompd-library / --ompd-library" : "named by the runtime (ompd_dll_locations)";
    st.library_problem.clear();
}

plugins::ompd_address_space& require_ompd(session& s) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    omp_process_state& st = process_state(s);
    if (st.aspace && st.aspace_target == tgt && st.aspace_pid == tgt->pid()) {
        return *st.aspace;
    }
    st.aspace.reset();
    auto probe = plugins::probe_openmp_runtime(*tgt);
    if (probe.what != plugins::omp_runtime_probe::kind::llvm_ompd) {
        error::send(probe.problem);
    }
    if (probe.dll_locations.empty()) {
        // The runtime fills ompd_dll_locations when it initialises (with or without
        // OMP_DEBUG), at the program's first OpenMP construct or call.
        error::send("the OpenMP runtime " + probe.runtime_path.string() +
                    " is not initialised yet: stop the program after its first OpenMP construct");
    }
    if (!probe.debug_enabled) {
        error::send(probe.problem);
    }
    omp_library_state& lib = library_state(s);
    ensure_library(lib, probe, plugin_host_policy(s.plugin_policy()));
    // TLS symbols (__kmp_gtid): the session's libthread_db (it lives as long as the
    // process), else the host walks glibc's DTV itself.
    plugins::tls_resolver tls = make_tls_resolver([&s] { return s.thread_db(); });
    st.aspace = std::make_unique<plugins::ompd_address_space>(lib.library, *tgt, std::move(tls));
    st.aspace_target = tgt;
    st.aspace_pid = tgt->pid();
    return *st.aspace;
}

std::string describe_code(session& s, std::uint64_t addr) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr || addr == 0) {
        return fmt::format("{:#x}", addr);
    }
    const tracer::loaded_module* m = tgt->module_at(virt_addr(addr));
    if (m == nullptr) {
        return fmt::format("{:#x}", addr);
    }
    std::shared_ptr<dwarf::elf_file> elf = m->elf;
    if (!elf) {
        try {
            elf = s.elf_for(m->path);
        } catch (const std::exception&) {
        }
    }
    if (!elf) {
        return fmt::format("{:#x}", addr);
    }
    std::uint64_t file_addr = m->to_file(virt_addr(addr));
    std::string name;
    std::string where;
    if (auto* dbg = elf->debug()) {
        auto chain = dbg->function_chain_at(file_addr);
        if (!chain.empty()) {
            name = chain.back().name;
        }
        if (auto line = dbg->line_at(file_addr)) {
            where = fs::path(line->file).filename().string() + ":" + std::to_string(line->line);
        }
    }
    if (name.empty()) {
        if (auto sym = elf->symbol_at(file_addr)) {
            name = sym->name;
        }
    }
    if (name.empty()) {
        name = fmt::format("{:#x}", addr);
    }
    return where.empty() ? name : name + " at " + where;
}

}  // namespace ompdbg::debugger::ompd
