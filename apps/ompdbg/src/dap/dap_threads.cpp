// threads: every thread of every process of the session (each rank of an MPI job), named
// with its OpenMP thread number and state where the model's OpenMP view (OMPD) knows them:
// "OMP 2 · barrier wait (thread 3)", "rank 1: OMP 0 · working (thread 1)".
#include <map>

#include <fmt/format.h>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "ompdbg/debugger/omp/thread_state_names.hpp"

namespace ompdbg::app::dap {

namespace {

/// OpenMP labels of the current inferior's threads by LWP ("OMP 2 · barrier wait"), from
/// the model's OpenMP thread view (OMPD). A libgomp program has none (no OMPD: its threads'
/// states are unknown), nor has a program without an OpenMP runtime that can be inspected.
std::map<pid_t, std::string> openmp_labels(session& s) {
    std::map<pid_t, std::string> out;
    std::vector<omp_thread_row> rows;
    try {
        if (runtime_of(s) == runtime_kind::libgomp) {
            return out;
        }
        rows = omp_thread_rows(s);
    } catch (const std::exception&) {
        return out;   // plain names
    }
    for (const omp_thread_row& row : rows) {
        if (!row.openmp) {
            continue;
        }
        std::string label = "OMP";
        if (row.thread_num) {
            label += " " + std::to_string(*row.thread_num);
        }
        if (!row.state.empty()) {
            label += " \u00b7 " + omp_state_short_name(row.state);
        }
        out[row.tid] = label;
    }
    return out;
}

// A rank session (dap_ranks.hpp) is answered its rank's threads, without the prefix.
void threads(adapter& a, request& r) {
    model_access access(a);
    session& s = access.model();
    nlohmann::json list = nlohmann::json::array();
    std::map<int, nlohmann::json> per_rank;
    std::size_t current = s.current_index();
    auto& infs = s.inferiors();
    for (std::size_t i = 0; i < infs.size(); ++i) {
        if (!infs[i]->process || !infs[i]->process->is_alive()) {
            continue;
        }
        if (s.current_index() != i) {
            s.switch_to(i);
        }
        s.refresh_thread_numbers();
        auto labels = openmp_labels(s);
        std::string prefix = infs[i]->rank >= 0 ? fmt::format("rank {}: ", infs[i]->rank) : std::string();
        for (auto* t : s.process()->threads()) {
            pid_t tid = t->tid();
            int number = s.thread_number(tid);
            auto l = labels.find(tid);
            std::string name = l != labels.end() ? fmt::format("{}{} (thread {})", prefix, l->second, number)
                                                 : fmt::format("{}Thread {} (LWP {})", prefix, number, tid);
            list.push_back({{"id", tid}, {"name", name}});
            if (infs[i]->rank >= 0) {
                auto& own = per_rank.try_emplace(infs[i]->rank, nlohmann::json::array()).first->second;
                own.push_back({{"id", tid}, {"name", name.substr(prefix.size())}});
            }
        }
    }
    if (current < infs.size() && s.current_index() != current) {
        s.switch_to(current);
    }
    int rank = a.requester_rank();
    nlohmann::json own = rank >= 0 && per_rank.count(rank) != 0 ? per_rank[rank] : nlohmann::json::array();
    a.remember_threads(list, std::move(per_rank));
    r.respond({{"threads", rank >= 0 ? own : list}});
}

}  // namespace

void register_thread_handlers(handler_table& t) {
    t["threads"] = threads;
}

}  // namespace ompdbg::app::dap
