// OpenMP views of a libgomp program, which has no OMPD: `omp threads` and `omp parallel`
// over libdebugger's gomp_threads (omp/stack_folding.hpp: the DMPL library, the threads'
// stacks and libgomp's per-thread data).

#include "commands_dmpl_shared.hpp"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "session.hpp"

namespace ompdbg::app {

namespace dmpl_impl {

namespace {

std::string libgomp_limits(const tracer::loaded_module* m, const std::string& reader_problem) {
    std::string why =
        reader_problem.empty()
            ? "libgomp has no OMPD support: OpenMP thread numbers, team sizes and levels come from libgomp's "
              "per-thread data (read the way its omp_get_thread_num/omp_get_num_threads/omp_get_level do); "
              "thread states, tasks and ICVs cannot be shown"
            : "libgomp has no OMPD support, so OpenMP thread numbers (except the encountering thread's 0), team "
              "sizes, thread states, tasks and ICVs cannot be shown (" +
                  reader_problem + ")";
    if (m != nullptr && m->elf && m->elf->debug() == nullptr) {
        why += "; " + m->path.string() + " has no debug information either (Debian ships it in "
               "libgomp1-dbgsym, outside the main archive)";
    }
    return why + ".";
}

}  // namespace

void gomp_omp_threads(session& s, fold_context& fc, const tracer::loaded_module* rt) {
    std::string problem;
    auto views = gomp_threads(s, fc, &problem);
    s.out().line(fmt::format("  {:<4} {:<8} {:<52} {}", "Id", "LWP", "Role", "Region"));
    nlohmann::json js = nlohmann::json::array();
    for (const auto& v : views) {
        std::string mark = v.tid == s.selected_tid() ? "*" : " ";
        s.out().line(fmt::format("{} {:<4} {:<8} {:<52} {}", mark, s.thread_number(v.tid), v.tid, v.role, v.region));
        nlohmann::json j{{"id", s.thread_number(v.tid)}, {"lwp", v.tid}, {"role", v.role}, {"region", v.region}};
        if (v.place) {
            j["thread_num"] = v.place->thread_num;
            j["team_size"] = v.place->team_size;
            j["level"] = v.place->level;
        }
        js.push_back(std::move(j));
    }
    s.out().line("(from ompdbg's DMPL library for libgomp and the threads' stacks: " + libgomp_limits(rt, problem) + ")");
    s.out().field("threads", js);
    s.out().field("limits", libgomp_limits(rt, problem));
}

void gomp_omp_parallel(session& s, fold_context& fc, const tracer::loaded_module* rt) {
    std::string problem;
    auto views = gomp_threads(s, fc, &problem);
    std::map<std::string, std::vector<const gomp_thread_view*>> regions;
    for (const auto& v : views) {
        if (!v.outlined.empty()) {
            regions[v.outlined].push_back(&v);
        }
    }
    nlohmann::json js = nlohmann::json::array();
    if (regions.empty()) {
        s.out().line("No thread is running a parallel region.");
    }
    for (const auto& [routine, members] : regions) {
        std::string enc = "?";
        std::string ids;
        for (const auto* v : members) {
            ids += (ids.empty() ? "" : ", ") + std::to_string(s.thread_number(v->tid));
            if (v->encountering) {
                enc = std::to_string(s.thread_number(v->tid));
            }
        }
        std::string l = fmt::format("{} (outlined {}): encountered by thread {}; threads running it now: {}",
                                    members.front()->region, routine, enc, ids);
        s.out().line(l);
        js.push_back({{"region", members.front()->region}, {"outlined", routine}, {"threads_in_region", ids}});
    }
    s.out().line("(from ompdbg's DMPL library for libgomp and the threads' stacks: team members waiting in "
                 "libgomp are not attributed to a region; " +
                 libgomp_limits(rt, problem) + ")");
    s.out().field("regions", js);
}

}  // namespace dmpl_impl
}  // namespace ompdbg::app
