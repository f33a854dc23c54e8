// Cycle enumeration is the simple form of Johnson's idea: elementary cycles are found once
// each by starting a depth-first search at every rank and only visiting larger ranks, so a
// cycle is reported from its smallest rank. MPI jobs the debugger holds are small (tens of
// ranks); max_cycles bounds the rare dense graph.

#include "ompdbg/debugger/mpi/wait_for_graph.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

namespace ompdbg::debugger {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const auto& s : v) {
        out += out.empty() ? "" : sep;
        out += s;
    }
    return out;
}

std::string dot_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

}  // namespace

void wait_for_graph::add_rank(int rank, rank_activity activity, std::string call, std::string note) {
    ranks_[rank] = rank_info{activity, std::move(call), std::move(note)};
}

void wait_for_graph::add_wait(int from, int to, std::string what) {
    auto& whats = edges_[from][to];
    if (std::find(whats.begin(), whats.end(), what) == whats.end()) {
        whats.push_back(std::move(what));
    }
}

void wait_for_graph::add_any_wait(int from, std::vector<int> candidates, std::string what) {
    any_waits_.push_back(any_wait{from, std::move(candidates), std::move(what)});
}

std::size_t wait_for_graph::count(rank_activity a) const {
    return static_cast<std::size_t>(
        std::count_if(ranks_.begin(), ranks_.end(), [a](const auto& r) { return r.second.activity == a; }));
}

std::string wait_for_graph::state_of(int rank) const {
    auto it = ranks_.find(rank);
    if (it == ranks_.end()) {
        return "is not being debugged";
    }
    const rank_info& r = it->second;
    switch (r.activity) {
    case rank_activity::running: return r.call.empty() ? "is running" : "is in " + r.call;
    case rank_activity::blocked_p2p: return "is blocked in " + (r.call.empty() ? "MPI" : r.call);
    case rank_activity::blocked_collective: return "is in " + (r.call.empty() ? "a collective" : r.call);
    case rank_activity::finished: return "has finished" + (r.note.empty() ? "" : " (" + r.note + ")");
    }
    return "";
}

std::string wait_for_graph::cycle::describe() const {
    std::string path;
    for (int r : ranks) {
        path += fmt::format("{} -> ", r);
    }
    path += std::to_string(ranks.empty() ? 0 : ranks.front());
    bool same = std::all_of(whats.begin(), whats.end(), [&](const std::string& w) { return w == whats.front(); });
    if (same && !whats.empty()) {
        return path + ", each blocked in " + whats.front();
    }
    std::vector<std::string> each;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        each.push_back(fmt::format("{} in {}", ranks[i], whats[i]));
    }
    return path + ": " + join(each, ", ");
}

std::string cleared_wait::describe() const {
    return fmt::format("rank {} in {} with rank {}: {}", rank, what, peer, why);
}

std::string wait_for_graph::finished_wait::describe(const wait_for_graph& g) const {
    return fmt::format("rank {} waits in {} for rank {}, which {}", rank, what, peer, g.state_of(peer));
}

wait_for_graph::report wait_for_graph::analyze(std::size_t max_cycles) const {
    report rep;
    // Only blocked ranks wait: an edge from a running rank (a pending non-blocking request)
    // is no wait at all.
    auto blocked = [&](int r) {
        auto it = ranks_.find(r);
        return it != ranks_.end() && it->second.activity == rank_activity::blocked_p2p;
    };
    auto label = [&](int from, int to) { return join(edges_.at(from).at(to), ", "); };

    std::set<int> on_cycle;
    for (const auto& [start, outs] : edges_) {
        if (!blocked(start)) {
            continue;
        }
        std::vector<int> path{start};
        std::set<int> in_path{start};
        std::function<void(int)> dfs = [&](int node) {
            if (rep.cycles_truncated) {
                return;
            }
            auto it = edges_.find(node);
            if (it == edges_.end()) {
                return;
            }
            for (const auto& [next, whats] : it->second) {
                (void)whats;
                if (next == start) {
                    if (rep.cycles.size() >= max_cycles) {
                        rep.cycles_truncated = true;
                        return;
                    }
                    cycle c;
                    c.ranks = path;
                    for (std::size_t i = 0; i < path.size(); ++i) {
                        c.whats.push_back(label(path[i], i + 1 < path.size() ? path[i + 1] : start));
                    }
                    on_cycle.insert(path.begin(), path.end());
                    rep.cycles.push_back(std::move(c));
                } else if (next > start && blocked(next) && !in_path.count(next)) {
                    path.push_back(next);
                    in_path.insert(next);
                    dfs(next);
                    in_path.erase(next);
                    path.pop_back();
                }
            }
        };
        dfs(start);
    }

    auto is_finished = [&](int r) {
        auto it = ranks_.find(r);
        return it != ranks_.end() && it->second.activity == rank_activity::finished;
    };
    auto is_stuck = [&](int r) {  // will not act on its own
        auto it = ranks_.find(r);
        return it != ranks_.end() && it->second.activity != rank_activity::running;
    };
    for (const auto& [from, outs] : edges_) {
        if (!blocked(from)) {
            continue;
        }
        for (const auto& [to, whats] : outs) {
            if (is_finished(to)) {
                rep.waits_on_finished.push_back(finished_wait{from, to, label(from, to)});
            }
        }
    }
    // Starved: blocked, on no cycle, not already reported as waiting on a finished rank,
    // and every rank it waits for is itself stuck (blocked elsewhere or in a collective).
    std::set<int> reported_finished;
    for (const auto& w : rep.waits_on_finished) {
        reported_finished.insert(w.rank);
    }
    for (const auto& [from, outs] : edges_) {
        if (!blocked(from) || on_cycle.count(from) || reported_finished.count(from)) {
            continue;
        }
        bool all_stuck = !outs.empty();
        std::vector<std::string> parts;
        for (const auto& [to, whats] : outs) {
            all_stuck = all_stuck && is_stuck(to) && to != from;
            parts.push_back(fmt::format("waits in {} for rank {}, which {}", join(whats, ", "), to, state_of(to)));
        }
        if (all_stuck) {
            rep.starved.push_back(starved_rank{from, join(parts, "; ")});
        }
    }
    for (const auto& w : any_waits_) {
        if (!blocked(w.from) || on_cycle.count(w.from)) {
            continue;
        }
        bool all_stuck = !w.candidates.empty();
        for (int c : w.candidates) {
            all_stuck = all_stuck && is_stuck(c);
        }
        if (all_stuck) {
            rep.starved.push_back(starved_rank{
                w.from, fmt::format("waits in {} for any rank, but every possible sender is blocked or finished", w.what)});
        }
    }
    return rep;
}

std::string wait_for_graph::to_dot() const {
    auto rep = analyze();
    std::set<std::pair<int, int>> cycle_edges;
    std::set<int> cycle_ranks;
    for (const auto& c : rep.cycles) {
        for (std::size_t i = 0; i < c.ranks.size(); ++i) {
            cycle_ranks.insert(c.ranks[i]);
            cycle_edges.insert({c.ranks[i], c.ranks[(i + 1) % c.ranks.size()]});
        }
    }
    std::string out = "digraph wait_for {\n  node [shape=box];\n";
    for (const auto& [rank, info] : ranks_) {
        std::string label = fmt::format("rank {}", rank);
        if (!info.call.empty()) {
            label += "\\n" + dot_escape(info.call);
        }
        if (info.activity == rank_activity::finished) {
            label += "\\nfinished";
        }
        std::string style;
        if (cycle_ranks.count(rank)) {
            style = ", color=red";
        } else if (info.activity == rank_activity::finished) {
            style = ", style=filled, fillcolor=lightgrey";
        }
        out += fmt::format("  r{} [label=\"{}\"{}];\n", rank, label, style);
    }
    for (const auto& [from, outs] : edges_) {
        for (const auto& [to, whats] : outs) {
            out += fmt::format("  r{} -> r{} [label=\"{}\"{}];\n", from, to, dot_escape(join(whats, ", ")),
                               cycle_edges.count({from, to}) ? ", color=red" : "");
        }
    }
    for (const auto& w : any_waits_) {
        for (int c : w.candidates) {
            out += fmt::format("  r{} -> r{} [label=\"{}\", style=dashed];\n", w.from, c, dot_escape(w.what));
        }
    }
    out += "}\n";
    return out;
}

}  // namespace ompdbg::debugger
