// omp compare, thread compare, mpi compare, thread where, rank where (issue 20): one
// expression in every OpenMP thread, thread or focused rank, grouped by value. The members
// and frames come from compare_gather, the grouping from value_compare; this file parses
// the arguments and prints text and JSON.

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands_compare.hpp"
#include "command_args.hpp"
#include "commands_mpi.hpp"
#include "session.hpp"
#include "ompdbg/debugger/compare/compare_gather.hpp"
#include "ompdbg/debugger/compare/value_compare.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

using debugger::compare::all_threads;
using debugger::compare::evaluate_truth;
using debugger::compare::evaluate_value;
using debugger::compare::frame_rule;
using debugger::compare::member_kind;
using debugger::compare::member_thread;
using debugger::compare::openmp_threads;
using debugger::compare::parse_for_members;
using debugger::compare::selection_rule;

namespace {

// ---- arguments ----------------------------------------------------------------------

struct compare_args {
    compare::tolerance tol;
    bool expect_equal = false;
    std::string expression;
};

constexpr const char* usage = "[--tolerance X] [--rtol X] [--expect-equal] EXPR";

long double parse_tolerance(const std::string& option, const std::string& text) {
    char* end = nullptr;
    long double v = std::strtold(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(v) || v < 0) {
        error::send(fmt::format("Invalid {} \"{}\": a number >= 0.", option, text));
    }
    return v;
}

/// Options come first; `--` or the first word that is not one starts EXPR (so `-x` and
/// `--x` stay expressions only after `--`).
compare_args parse_compare_args(std::string_view args, const std::string& command) {
    compare_args out;
    std::string rest = trim_copy(args);
    for (;;) {
        if (!rest.starts_with("--")) {
            break;
        }
        std::size_t end = rest.find_first_of(" \t");
        std::string word = rest.substr(0, end);
        rest = end == std::string::npos ? std::string() : trim_copy(std::string_view(rest).substr(end));
        std::string value;
        if (auto eq = word.find('='); eq != std::string::npos) {
            value = word.substr(eq + 1);
            word = word.substr(0, eq);
        }
        auto take_value = [&] {
            if (!value.empty()) {
                return value;
            }
            std::size_t e = rest.find_first_of(" \t");
            std::string v = rest.substr(0, e);
            rest = e == std::string::npos ? std::string() : trim_copy(std::string_view(rest).substr(e));
            return v;
        };
        if (word == "--") {
            break;
        }
        if (word == "--tolerance") {
            out.tol.absolute = parse_tolerance("tolerance", take_value());
        } else if (word == "--rtol") {
            out.tol.relative = parse_tolerance("relative tolerance", take_value());
        } else if (word == "--expect-equal") {
            out.expect_equal = true;
        } else {
            error::send(fmt::format("Unknown option \"{}\": {} {}", word, command, usage));
        }
    }
    out.expression = rest;
    if (out.expression.empty()) {
        error::send(fmt::format("Argument required (expression to compute): {} {}", command, usage));
    }
    return out;
}

// ---- text ---------------------------------------------------------------------------

/// "OMP threads 0-1,3", "thread 2", "rank 0-2" (ranks as `mpi stacks` tags them).
std::string members_text(member_kind kind, const std::vector<int>& ids) {
    std::string list = format_rank_list(ids);
    switch (kind) {
        case member_kind::omp_thread: return (ids.size() == 1 ? "OMP thread " : "OMP threads ") + list;
        case member_kind::thread: return (ids.size() == 1 ? "thread " : "threads ") + list;
        case member_kind::rank: break;
    }
    return "rank " + list;
}

const char* member_noun(member_kind kind) {
    return kind == member_kind::rank ? "rank" : "thread";
}

std::string difference_text(const std::string& expr, const compare::difference& d) {
    const char* what = d.fields ? "fields" : "elements";
    std::string out;
    if (d.lengths) {
        out = fmt::format("length {}, the majority's {}; ", d.lengths->first, d.lengths->second);
    }
    return out + fmt::format("differs from the majority in {} of {} {}, first {}{}", d.differing, d.total, what, expr,
                             d.first);
}

std::string number_text(long double n) { return fmt::format("{}", static_cast<double>(n)); }

void print_result(session& s, const std::string& expr, member_kind kind, const compare::result& r,
                  const compare::tolerance& tol) {
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : r.groups) {
        std::string value = g.low_text.empty() ? g.value.text : g.low_text + " .. " + g.high_text;
        std::string line = fmt::format("{} = {}  [{}]", expr, value, members_text(kind, g.members));
        nlohmann::json j{{"value", g.value.text}, {"members", g.members}, {"count", g.members.size()}};
        if (!g.low_text.empty()) {
            j["low"] = g.low_text;
            j["high"] = g.high_text;
        }
        if (g.differs) {
            line += "  (" + difference_text(expr, *g.differs) + ")";
            j["differs"] = {{"differing", g.differs->differing}, {"total", g.differs->total},
                            {"first", expr + g.differs->first}, {"fields", g.differs->fields}};
            if (g.differs->lengths) {
                j["differs"]["length"] = g.differs->lengths->first;
                j["differs"]["majority_length"] = g.differs->lengths->second;
            }
        }
        if (g.value.truncated) {
            j["truncated"] = true;
        }
        s.out().line(line);
        groups.push_back(j);
    }
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& e : r.errors) {
        s.out().line(fmt::format("{}: {}  [{}]", expr, e.reason, members_text(kind, e.members)));
        errors.push_back(
            {{"reason", e.reason}, {"message", e.message}, {"members", e.members}, {"count", e.members.size()}});
    }
    nlohmann::json summary = nullptr;
    if (r.stats) {
        const auto& st = *r.stats;
        s.out().line(fmt::format("count {}, min {} [{}], max {} [{}], mean {}", st.count, st.min_text,
                                 members_text(kind, st.min_members), st.max_text, members_text(kind, st.max_members),
                                 number_text(st.mean)));
        summary = {{"count", st.count},
                   {"min", st.min_text},
                   {"max", st.max_text},
                   {"mean", static_cast<double>(st.mean)},
                   {"min_members", st.min_members},
                   {"max_members", st.max_members}};
    }
    s.out().field("expression", expr);
    s.out().field("members", kind == member_kind::omp_thread ? "omp threads"
                             : kind == member_kind::thread ? "threads"
                                                           : "ranks");
    s.out().field("groups", groups);
    s.out().field("errors", errors);
    s.out().field("summary", summary);
    s.out().field("equal", r.all_equal());
    s.out().field("tolerance", {{"absolute", static_cast<double>(tol.absolute)},
                                {"relative", static_cast<double>(tol.relative)}});
}

/// --expect-equal: the command fails after printing the groups.
void check_equal(const compare_args& a, member_kind kind, const compare::result& r) {
    if (!a.expect_equal || r.all_equal()) {
        return;
    }
    std::size_t without = 0;
    for (const auto& e : r.errors) {
        without += e.members.size();
    }
    std::string what = fmt::format("{} value{}", r.groups.size(), r.groups.size() == 1 ? "" : "s");
    if (without != 0) {
        what += fmt::format(", {} {}{} without one", without, member_noun(kind), without == 1 ? "" : "s");
    }
    error::send(fmt::format("{} is not the same everywhere: {}.", a.expression, what));
}

// ---- threads --------------------------------------------------------------------------

void compare_threads(session& s, const compare_args& a, member_kind kind, const std::vector<member_thread>& members) {
    auto e = parse_for_members(s, a.expression, "thread");
    frame_rule rule = selection_rule(s);
    std::vector<compare::sample> samples;
    for (const auto& m : members) {
        samples.push_back(evaluate_value(s, m, rule, *e, s.settings().print));
    }
    auto r = compare::compare_samples(samples, a.tol);
    print_result(s, a.expression, kind, r, a.tol);
    check_equal(a, kind, r);
}

void require_threads(session& s) {
    if (s.target() == nullptr || (s.target()->is_live() && !(s.process() && s.process()->is_alive()))) {
        error::send("The program is not being run.");
    }
}

void cmd_thread_compare(session& s, std::string_view args) {
    auto a = parse_compare_args(args, "thread compare");
    require_threads(s);
    compare_threads(s, a, member_kind::thread, all_threads(s));
}

void cmd_omp_compare(session& s, std::string_view args) {
    auto a = parse_compare_args(args, "omp compare");
    require_threads(s);
    std::string why;
    if (auto omp = openmp_threads(s, why)) {
        compare_threads(s, a, member_kind::omp_thread, *omp);
        return;
    }
    // gdb numbers when OMPD cannot number the OpenMP threads: every thread takes part.
    s.out().line(fmt::format("No OpenMP thread numbers ({}): comparing every thread.", why));
    s.out().field("note", why);
    compare_threads(s, a, member_kind::thread, all_threads(s));
}

void cmd_thread_where(session& s, std::string_view args) {
    std::string text = trim_copy(args);
    require_threads(s);
    auto e = parse_for_members(s, text, "thread");
    frame_rule rule = selection_rule(s);
    std::vector<int> yes;
    std::vector<compare::sample> failed;
    auto members = all_threads(s);
    for (const auto& m : members) {
        std::string error;
        auto truth = evaluate_truth(s, m, rule, *e, error);
        if (truth && *truth) {
            yes.push_back(m.number);
        } else if (!truth) {
            failed.push_back({m.number, std::nullopt, error});
        }
    }
    if (yes.empty()) {
        s.out().line(fmt::format("{} is true in no thread (of {}).", text, members.size()));
    } else {
        s.out().line(fmt::format("{} is true in {} ({} of {}).", text, members_text(member_kind::thread, yes),
                                 yes.size(), members.size()));
    }
    auto r = compare::compare_samples(failed, {});
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& g : r.errors) {
        s.out().line(fmt::format("{}: {}  [{}]", text, g.reason, members_text(member_kind::thread, g.members)));
        errors.push_back({{"reason", g.reason}, {"message", g.message}, {"members", g.members}});
    }
    s.out().field("expression", text);
    s.out().field("threads", yes);
    s.out().field("errors", errors);
}

// ---- ranks ------------------------------------------------------------------------------

/// Every focused rank's sample: its selected thread, by the current rank's frame rule; a
/// rank that ended gives its state ("exited(0)") as the reason.
template <typename Fn>
void for_each_rank_thread(session& s, const Fn& fn) {
    frame_rule rule = selection_rule(s);
    for_each_focused_rank(s, false, [&](inferior& inf) {
        if (!inf.process || !inf.process->is_alive()) {
            fn(inf, nullptr, rule);
            return;
        }
        member_thread m{inf.rank, s.selected_tid(), s.selected_frame()};
        fn(inf, &m, rule);
    });
}

void require_job(session& s) {
    if (!is_mpi_session(s)) {
        error::send("No MPI job is being debugged.");
    }
}

void cmd_mpi_compare(session& s, std::string_view args) {
    auto a = parse_compare_args(args, "mpi compare");
    require_job(s);
    auto e = parse_for_members(s, a.expression, "rank");
    std::vector<compare::sample> samples;
    for_each_rank_thread(s, [&](inferior& inf, const member_thread* m, const frame_rule& rule) {
        if (m == nullptr) {
            samples.push_back({inf.rank, std::nullopt, rank_state(inf)});
        } else {
            samples.push_back(evaluate_value(s, *m, rule, *e, s.settings().print));
        }
    });
    auto r = compare::compare_samples(samples, a.tol);
    print_result(s, a.expression, member_kind::rank, r, a.tol);
    check_equal(a, member_kind::rank, r);
}

void cmd_rank_where(session& s, std::string_view args) {
    std::string text = trim_copy(args);
    require_job(s);
    auto e = parse_for_members(s, text, "rank");
    std::vector<int> yes;
    std::vector<std::size_t> focus;
    std::vector<compare::sample> failed;
    std::size_t asked = 0;
    for_each_rank_thread(s, [&](inferior& inf, const member_thread* m, const frame_rule& rule) {
        ++asked;
        std::string error = m == nullptr ? rank_state(inf) : std::string();
        std::optional<bool> truth = m == nullptr ? std::nullopt : evaluate_truth(s, *m, rule, *e, error);
        if (truth && *truth) {
            yes.push_back(inf.rank);
            focus.push_back(s.current_index());
        } else if (!truth) {
            failed.push_back({inf.rank, std::nullopt, error});
        }
    });
    auto r = compare::compare_samples(failed, {});
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& g : r.errors) {
        s.out().line(fmt::format("{}: {}  [{}]", text, g.reason, members_text(member_kind::rank, g.members)));
        errors.push_back({{"reason", g.reason}, {"message", g.message}, {"members", g.members}});
    }
    s.out().field("expression", text);
    s.out().field("errors", errors);
    if (yes.empty()) {
        error::send(fmt::format("{} is true in no rank of the focus (of {}): the focus is unchanged.", text, asked));
    }
    s.focus() = focus;
    s.switch_to(focus.front());
    s.out().line(fmt::format("{} is true in rank {} ({} of {}).", text, format_rank_list(yes), yes.size(), asked));
    s.out().line(fmt::format("Focus: rank {}.", format_rank_list(yes)));
    s.out().field("focus", yes);
}

}  // namespace

void register_compare_commands(command_table& t) {
    const std::string options =
        "--tolerance X: floating-point numbers within X of each other are equal; --rtol X: within X times the\n"
        "larger; --expect-equal: the command fails (batch mode exits non-zero) unless every member has\n"
        "the same value.\n";
    const std::string frames =
        "Each evaluates EXPR in the innermost frame of the function of the selected frame, or where\n"
        "that function is not on its stack, in its selected frame. EXPR must not change anything\n"
        "(no assignment, ++, --, or function call).\n";
    auto& omp = t.prefix("omp", {}, "OpenMP threads, parallel regions, tasks and ICVs (through OMPD).");
    omp.add({"compare", {}, "Compare an expression across the OpenMP threads, grouped by value.",
             std::string("omp compare ") + usage +
                 "\nEXPR in every OpenMP thread of the current process, one line per distinct value with\n"
                 "its threads (`x = 4  [OMP threads 0,2]`), largest group first; threads that cannot\n"
                 "evaluate it with the reason; a summary line for numbers; for arrays, structs and C++\n"
                 "containers how each minority value differs from the majority's. Without OMPD, every\n"
                 "thread (as `thread compare`).\n" +
                 frames + options,
             cmd_omp_compare, false, nullptr});
    auto& thread = t.prefix("thread", {"t"}, "Use this command to switch between threads.");
    thread.add({"compare", {}, "Compare an expression across every thread, grouped by value.",
                std::string("thread compare ") + usage + "\nAs `omp compare`, over every thread (gdb's numbers).\n" +
                    frames + options,
                cmd_thread_compare, false, nullptr});
    thread.add({"where", {}, "List the threads where an expression is true.",
                "thread where EXPR\nThe threads (gdb's numbers) where EXPR is true, and those that cannot "
                "evaluate it.\n" +
                    frames,
                cmd_thread_where, false, nullptr});
    auto& mpi = t.prefix("mpi", {}, "MPI job commands (ranks, stacks, message queues).");
    mpi.add({"compare", {}, "Compare an expression across the focused ranks, grouped by value.",
             std::string("mpi compare ") + usage +
                 "\nAs `omp compare`, over the focused ranks, each in its selected thread (`resid = 0.25  [rank "
                 "0-2]`);\na rank that ended is a group with its state.\n" +
                 frames + options,
             cmd_mpi_compare, false, nullptr});
    auto& rank = t.prefix("rank", {}, "Set the ranks that commands apply to.");
    rank.add({"where", {}, "Focus on the ranks where an expression is true.",
              "rank where EXPR\nAmong the focused ranks (`rank all` first for the whole job), those where EXPR is "
              "true\nbecome the focus (`rank where resid > 1e-6`, then `bt` or `print` just there). None: an\n"
              "error, the focus unchanged.\n" +
                  frames,
              cmd_rank_where, false, nullptr});
}

}  // namespace ompdbg::app
