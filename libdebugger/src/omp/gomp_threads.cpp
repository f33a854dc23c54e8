// Where each thread of a libgomp program (which has no OMPD) stands in OpenMP, from the DMPL
// library, the threads' stacks and libgomp's per-thread data (omp/stack_folding.hpp): the
// model of `omp threads` and `omp parallel` of libgomp and of `ompdbg triage`'s labels.

#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "omp/dmpl_process.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/dmpl.h"

namespace ompdbg::debugger {

namespace {

/// What a thread inside a region does, from the runtime entry point its outlined routine
/// called (the frame just inside the outlined one): the public names of libgomp and libomp
/// are in their dynamic symbol tables even when the runtime has no other symbols.
std::string runtime_call_state(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t outlined) {
    if (outlined == 0 || !in_runtime(fc, frames[outlined - 1])) {
        return "in the region";
    }
    std::string entry = frame_symbol(frames[outlined - 1]);
    if (fc.s->target() != nullptr) {
        // The entry point the routine called (its frame may be gone: a tail call), which
        // names the construct better than the innermost runtime frame.
        if (std::string called = called_function(*fc.s->target(), frames[outlined].pc()); !called.empty()) {
            entry = called;
        }
    }
    static const std::vector<std::pair<std::string_view, std::string_view>> kinds{
        {"GOMP_barrier", "barrier wait"},          {"__kmpc_barrier", "barrier wait"},
        {"GOMP_critical", "critical wait"},        {"__kmpc_critical", "critical wait"},
        {"omp_set_lock", "lock wait"},             {"omp_set_nest_lock", "lock wait"},
        {"GOMP_taskwait", "taskwait"},             {"__kmpc_omp_taskwait", "taskwait"},
        {"GOMP_taskgroup_end", "taskgroup wait"},  {"__kmpc_end_taskgroup", "taskgroup wait"},
        {"GOMP_ordered", "ordered wait"},          {"__kmpc_ordered", "ordered wait"},
    };
    for (const auto& [prefix, kind] : kinds) {
        if (entry.starts_with(prefix)) {
            return fmt::format("{} ({})", kind, entry);
        }
    }
    return entry.empty() ? "in the runtime" : "in the runtime (" + entry + ")";
}

}  // namespace

std::vector<gomp_thread_view> gomp_threads(session& s, const fold_context& fc, std::string* reader_problem) {
    std::vector<gomp_thread_view> out;
    std::map<std::string, std::string> where_by_routine;  // outlined → construct location
    tracer::target* tgt = s.target();
    std::optional<gomp_team_reader> reader;
    if (auto rt = find_runtime(*tgt); rt.kind == runtime_kind::libgomp && rt.module != nullptr && rt.module->elf) {
        reader.emplace(*tgt, *rt.module);
        if (reader_problem != nullptr) {
            *reader_problem = reader->problem();
        }
    }
    for (tracer::thread* th : tgt->threads()) {
        if (th->state() == tracer::thread_state::exited) {
            continue;
        }
        gomp_thread_view v;
        v.tid = th->tid();
        const auto& frames = s.stack(v.tid);
        auto inner = innermost_outlined(fc, frames);
        if (inner) {
            v.outlined = inner->first;
            if (std::string w = construct_where(frames[inner->second]); !w.empty()) {
                where_by_routine[v.outlined] = w;
            }
            if (auto k = encountering_frame(fc, frames, v.outlined)) {
                v.encountering = true;
                where_by_routine.emplace(v.outlined, where_of(frames[*k]));
            }
            v.role = v.encountering ? "encountering thread (OpenMP thread 0)" : "team member";
            if (reader) {
                v.place = reader->of(v.tid);
            }
            if (v.place) {
                v.role = fmt::format("{}OpenMP thread {} of {} (level {})", v.encountering ? "encountering thread, " : "",
                                     v.place->thread_num, v.place->team_size, v.place->level);
            }
        } else {
            bool runtime = std::any_of(frames.begin(), frames.end(),
                                       [&](const stack_frame& f) { return in_runtime(fc, f); });
            v.role = runtime ? "in libgomp (idle, or between regions)" : "not in a parallel region";
        }
        out.push_back(v);
    }
    for (auto& v : out) {
        if (v.outlined.empty()) {
            continue;
        }
        auto parent = fc.lib->demangle(v.outlined);
        v.region = "omp parallel in " + (parent.rc == DMPL_ok ? parent.name : v.outlined);
        if (auto it = where_by_routine.find(v.outlined); it != where_by_routine.end() && !it->second.empty()) {
            v.region += " at " + it->second;
        }
    }
    return out;
}

std::string called_function(tracer::target& tgt, std::uint64_t return_address) {
    unsigned char before[6] = {};
    if (return_address < 6 ||
        tgt.try_read_memory(virt_addr(return_address - 6), std::as_writable_bytes(std::span(before))) != 6) {
        return {};
    }
    std::int32_t rel32 = 0;
    std::memcpy(&rel32, before + 2, 4);
    // `lookup(elf, file address)` in the module holding run-time address `addr`.
    auto in_module = [&](std::uint64_t addr, auto&& lookup) -> std::optional<std::string> {
        const tracer::loaded_module* m = tgt.module_at(virt_addr(addr));
        if (m == nullptr || !m->elf) {
            return std::nullopt;
        }
        return lookup(*m->elf, m->to_file(virt_addr(addr)));
    };
    auto symbol_named = [](const dwarf::elf_file& e, std::uint64_t a) -> std::optional<std::string> {
        if (auto sym = e.symbol_at(a)) {
            return sym->name;
        }
        return std::nullopt;
    };
    if (before[0] == 0xff && before[1] == 0x15) {
        std::uint64_t got = return_address + static_cast<std::int64_t>(rel32);
        auto name = in_module(got, [](const dwarf::elf_file& e, std::uint64_t a) { return e.got_slot_symbol(a); });
        std::uint64_t target = 0;
        if (!name && tgt.try_read_memory(virt_addr(got), std::as_writable_bytes(std::span(&target, 1))) == 8) {
            name = in_module(target, symbol_named);
        }
        return name.value_or("");
    }
    if (before[1] == 0xe8) {
        std::uint64_t callee = return_address + static_cast<std::int64_t>(rel32);
        auto name = in_module(callee, [&](const dwarf::elf_file& e, std::uint64_t a) -> std::optional<std::string> {
            if (auto stub = e.plt_symbol_at(a)) {
                return stub->name.substr(0, stub->name.rfind("@plt"));
            }
            return symbol_named(e, a);
        });
        return name.value_or("");
    }
    return {};
}

std::vector<dmpl_thread_position> dmpl_thread_positions(session& s) {
    if (dmpl_for(s, true) == nullptr) {
        error::send("no OpenMP runtime is loaded in the program (yet)");
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        error::send("the DMPL library cannot be used");
    }
    std::vector<dmpl_thread_position> out;
    for (const auto& v : gomp_threads(s, *fc)) {
        dmpl_thread_position p;
        p.tid = v.tid;
        p.region = v.region;
        p.encountering = v.encountering;
        if (v.place) {
            p.thread_num = v.place->thread_num;
            p.team_size = v.place->team_size;
            p.level = v.place->level;
        }
        const auto& frames = s.stack(v.tid);
        if (auto inner = innermost_outlined(*fc, frames)) {
            // clang's chain: the routine the runtime called is outermost; the call into the
            // runtime comes from the innermost of the chain.
            std::size_t k = inner->second;
            while (k > 0 && outlined_parent(*fc, frames[k - 1])) {
                --k;
            }
            p.state = runtime_call_state(*fc, frames, k);
        } else {
            p.state = v.role.starts_with("in libgomp") ? "idle in the runtime" : "not in a parallel region";
        }
        out.push_back(std::move(p));
    }
    forget_dmpl_view(s);
    return out;
}

}  // namespace ompdbg::debugger
