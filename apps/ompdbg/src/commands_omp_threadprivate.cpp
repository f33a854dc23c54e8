// Each thread's copy of a threadprivate variable: `omp threadprivate NAME`, and the copy
// that `print` shows in the selected thread (native TLS through libthread_db, copies the
// OpenMP runtime keeps through its DMPL library).

#include "commands_dmpl.hpp"
#include "commands_dmpl_shared.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command_args.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace dmpl_impl {

namespace {

struct global_var {
    dwarf::variable var;
    const tracer::loaded_module* module = nullptr;
};

std::optional<global_var> find_global(session& s, const std::string& name) {
    tracer::target* tgt = s.target();
    for (const auto& m : tgt->modules()) {
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

void cmd_omp_threadprivate(session& s, std::string_view args) {
    std::string name(trim(args));
    if (name.empty()) {
        error::send("Argument required (name of a threadprivate variable).");
    }
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    auto g = find_global(s, name);
    if (!g) {
        error::send("No symbol \"" + name + "\" in current context.");
    }
    location_facts lf = facts_of(g->var);
    plugins::dmpl_process* proc = dmpl_for(s, false);
    struct row {
        pid_t tid;
        std::string omp, address, value;
    };
    std::vector<row> rows;
    bool runtime_managed = false;
    for (tracer::thread* th : tgt->threads()) {
        if (th->state() == tracer::thread_state::exited) {
            continue;
        }
        pid_t tid = th->tid();
        row r{tid, "-", "", ""};
        if (auto pos = omp_position(s, tid)) {
            r.omp = std::to_string(pos->first);
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
    s.out().line(fmt::format("  {:<4} {:<8} {:<4} {:<18} {}", "Id", "LWP", "OMP", "Address", "Value"));
    nlohmann::json js = nlohmann::json::array();
    for (const auto& r : rows) {
        std::string mark = r.tid == s.selected_tid() ? "*" : " ";
        s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {:<18} {}", mark, s.thread_number(r.tid), r.tid, r.omp,
                                 r.address, r.value));
        js.push_back({{"id", s.thread_number(r.tid)}, {"lwp", r.tid}, {"omp_thread", r.omp},
                      {"address", r.address}, {"value", r.value}});
    }
    s.out().field("variable", name);
    s.out().field("threads", js);
}

}  // namespace dmpl_impl

using namespace dmpl_impl;

}  // namespace ompdbg::app
