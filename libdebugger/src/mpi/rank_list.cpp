// Rank lists of an MPI job: `rank 0-3,6` / `all` parsed and printed ("0-3,6"), the
// `break ... rank N` clause, and the ranks a breakpoint set under a focus applies to.

#include "ompdbg/debugger/mpi/rank_list.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/text.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

std::string format_rank_list(std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string out;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
            ++j;
        }
        if (!out.empty()) {
            out += ",";
        }
        out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
        i = j + 1;
    }
    return out;
}

namespace {

/// Parses "3", "0-3,6" (not "all") into sorted ranks; `max_rank` < 0: no job to check
/// against.
std::vector<int> parse_rank_numbers(const std::string& t, int max_rank) {
    auto number = [&](const std::string& w) {
        std::size_t used = 0;
        long v = -1;
        try {
            v = std::stol(w, &used, 10);
        } catch (const std::logic_error&) {
            used = 0;
        }
        if (used != w.size() || w.empty() || v < 0) {
            error::send(fmt::format("Invalid rank list \"{}\": expected N, N-M, N,M or all.", t));
        }
        if (max_rank >= 0 && v > max_rank) {
            error::send(fmt::format("No rank {}: the job has ranks 0-{}.", v, max_rank));
        }
        return static_cast<int>(v);
    };
    std::vector<int> out;
    std::stringstream in(t);
    std::string part;
    while (std::getline(in, part, ',')) {
        part = trim_copy(part);
        auto dash = part.find('-');
        if (dash == std::string::npos) {
            out.push_back(number(part));
            continue;
        }
        int a = number(trim_copy(part.substr(0, dash)));
        int b = number(trim_copy(part.substr(dash + 1)));
        if (b < a) {
            error::send(fmt::format("Invalid rank range \"{}\".", part));
        }
        for (int r = a; r <= b; ++r) {
            out.push_back(r);
        }
    }
    if (out.empty()) {
        error::send("Argument required (rank list: N, N-M, N,M or all).");
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

/// The ranks of the job's inferiors (empty: no MPI job).
std::vector<int> job_ranks(session& s) {
    std::vector<int> all;
    for (auto& inf : s.inferiors()) {
        if (inf->rank >= 0) {
            all.push_back(inf->rank);
        }
    }
    return all;
}

}  // namespace

std::vector<int> parse_rank_list(session& s, std::string_view text) {
    std::string t = trim_copy(text);
    std::vector<int> all = job_ranks(s);
    if (all.empty()) {
        error::send("No MPI job is being debugged.");
    }
    if (t == "all") {
        return all;
    }
    return parse_rank_numbers(t, *std::max_element(all.begin(), all.end()));
}

std::optional<std::vector<int>> split_rank_clause(session& s, std::string& spec) {
    auto clause = split_trailing_clause(spec, "rank");
    if (!clause || trim(clause->before).empty()) {
        return std::nullopt;
    }
    const std::string& list = clause->token;
    const std::string rest = clause->before;
    std::vector<int> all = job_ranks(s);
    std::vector<int> ranks;
    if (list == "all") {
        ranks = all;
    } else if (!all.empty()) {
        ranks = parse_rank_numbers(list, *std::max_element(all.begin(), all.end()));
    } else if (s.process() && s.process()->is_alive()) {
        error::send("No MPI job is being debugged: \"rank\" applies to MPI ranks.");
    } else {
        ranks = parse_rank_numbers(list, -1);   // before `run -- mpirun`: checked at no job yet
    }
    spec = trim_copy(rest);
    if (!all.empty() && ranks.size() >= all.size()) {
        ranks.clear();   // every rank of the job: no restriction
    }
    return ranks;
}

std::vector<int> breakpoint_ranks_of_focus(session& s) {
    if (s.job() == nullptr || s.focus().size() >= s.inferiors().size()) {
        return {};
    }
    std::vector<int> ranks;
    for (std::size_t i : s.focus()) {
        ranks.push_back(s.inferiors()[i]->rank);
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

}  // namespace ompdbg::debugger
