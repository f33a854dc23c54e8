// Each thread's copy of a threadprivate variable (`omp threadprivate NAME`; from the CLI,
// issue 19): native TLS through libthread_db, or the copy the OpenMP runtime keeps through
// its DMPL library (DMPL_get_tls_address).

#include "omp/dmpl_process.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/omp/outlined_locals.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"

namespace ompdbg::debugger {

namespace {

struct global_var {
    dwarf::variable var;
    const tracer::loaded_module* module = nullptr;
};

std::optional<global_var> find_global(tracer::target& tgt, const std::string& name) {
    for (const auto& m : tgt.modules()) {
        if (!m.elf) {
            continue;
        }
        if (dwarf::debug_info* dbg = m.elf->debug()) {
            if (auto g = dbg->find_global(name)) {
                return global_var{*g, &m};
            }
        }
    }
    return std::nullopt;
}

}  // namespace

std::vector<threadprivate_copy> threadprivate_copies(session& s, const std::string& name) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    auto g = find_global(*tgt, name);
    if (!g) {
        error::send("No symbol \"" + name + "\" in current context.");
    }
    location_facts lf = facts_of(g->var);
    plugins::dmpl_process* proc = dmpl_for(s, false);
    std::vector<threadprivate_copy> rows;
    bool runtime_managed = false;
    for (tracer::thread* th : tgt->threads()) {
        if (th->state() == tracer::thread_state::exited) {
            continue;
        }
        pid_t tid = th->tid();
        threadprivate_copy r{tid, "-", "", ""};
        if (auto pos = omp_position(s, tid)) {
            r.omp_thread = std::to_string(pos->first);
        }
        try {
            const auto& st = s.stack(tid);
            if (st.empty()) {
                r.value = "<no frame>";
                rows.push_back(r);
                continue;
            }
            frame_context ctx(s, tid, st[0]);
            dwarf::value v = ctx.read_variable(g->var, g->module);
            if (proc != nullptr && v.address) {
                auto a = proc->tls_address(tid, *v.address);
                if (a.rc == DMPL_ok) {
                    runtime_managed = true;
                    v = dmpl_thread_copy(s, tid, name, v);
                } else if (a.rc == DMPL_tls_unallocated) {
                    runtime_managed = true;
                    r.value = "<not allocated yet (DMPL_tls_unallocated)>";
                } else if (a.rc != DMPL_tls_native) {
                    r.value = "<error: " + a.message + ">";
                }
            }
            if (r.value.empty()) {
                r.address = v.address ? fmt::format("{:#x}", *v.address) : "";
                r.value = dwarf::format_value(v, ctx);
            }
        } catch (const std::exception& e) {
            r.value = std::string("<error: ") + e.what() + ">";
        }
        rows.push_back(r);
    }
    if (!lf.tls && !runtime_managed) {
        error::send("`" + name + "' is not threadprivate: it is not thread-local in the debug information and "
                    "the OpenMP runtime's threadprivate tables do not hold it");
    }
    return rows;
}

}  // namespace ompdbg::debugger
