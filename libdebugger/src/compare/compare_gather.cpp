// Members and frames of the compare commands (compare_gather.hpp).

#include "ompdbg/debugger/compare/compare_gather.hpp"
#include "omp/ompd_state.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"
#include "ompdbg/dwarf/expr_effects.hpp"
#include "ompdbg/dwarf/value_tree.hpp"

namespace ompdbg::debugger::compare {

namespace {

std::string module_of(const stack_frame& f) { return f.module ? f.module->path.string() : std::string(); }

/// The frame `m` evaluates in: the innermost frame of the rule's function, else its own.
const stack_frame& frame_of(session& s, const member_thread& m, const frame_rule& rule) {
    const auto& frames = s.stack(m.tid);
    if (frames.empty()) {
        error::send("No stack.");
    }
    if (!rule.function.empty()) {
        for (const auto& f : frames) {
            if (frame_function_name(f) == rule.function && module_of(f) == rule.module) {
                return f;
            }
        }
    }
    std::size_t level = static_cast<std::size_t>(std::max(0, m.fallback_frame));
    return frames[std::min(level, frames.size() - 1)];
}

}  // namespace

frame_rule selection_rule(session& s) {
    try {
        if (s.target() == nullptr || s.selected_tid() == 0) {
            return {};
        }
        const auto& frames = s.stack(s.selected_tid());
        auto level = static_cast<std::size_t>(std::max(0, s.selected_frame()));
        if (level >= frames.size()) {
            return {};
        }
        const stack_frame& f = frames[level];
        if (!f.function && f.symbol_name.empty()) {
            return {};
        }
        return {frame_function_name(f), module_of(f)};
    } catch (const std::exception&) {
        return {};
    }
}

std::shared_ptr<const dwarf::expression> parse_for_members(session& s, const std::string& text,
                                                           const std::string& where) {
    if (text.empty()) {
        error::send("Argument required (expression to compute).");
    }
    // The selected frame's context tells casts from parenthesised names; without a frame
    // (no process yet) the parser goes without.
    std::optional<frame_context> ctx;
    try {
        ctx.emplace(frame_context::for_selection(s));
    } catch (const std::exception&) {
    }
    auto e = dwarf::parse_expression(text, ctx ? &*ctx : nullptr);
    if (auto effect = dwarf::side_effect_of(*e)) {
        error::send(fmt::format("Refusing \"{}\": {} would run in every {}.", text, *effect, where));
    }
    return e;
}

compare::sample evaluate_value(session& s, const member_thread& m, const frame_rule& rule, const dwarf::expression& e,
                               const dwarf::format_options& opts) {
    compare::sample out;
    out.member = m.number;
    try {
        frame_context ctx(s, m.tid, frame_of(s, m, rule));
        dwarf::value v = dwarf::evaluate(e, ctx);
        if (v.optimized_out) {
            error::send("value has been optimized out");
        }
        out.value = dwarf::decompose_value(v, ctx, opts);
    } catch (const std::exception& ex) {
        out.message = ex.what();
    }
    return out;
}

std::optional<bool> evaluate_truth(session& s, const member_thread& m, const frame_rule& rule,
                                   const dwarf::expression& e, std::string& error) {
    try {
        frame_context ctx(s, m.tid, frame_of(s, m, rule));
        dwarf::value v = dwarf::evaluate(e, ctx);
        if (v.optimized_out) {
            error::send("value has been optimized out");
        }
        return dwarf::is_true(v);
    } catch (const std::exception& ex) {
        error = ex.what();
        return std::nullopt;
    }
}

std::vector<member_thread> all_threads(session& s) {
    std::vector<member_thread> out;
    if (s.target() == nullptr) {
        error::send("No threads.");
    }
    s.refresh_thread_numbers();
    for (auto* t : s.target()->threads()) {
        bool selected = t->tid() == s.selected_tid();
        out.push_back({s.thread_number(t->tid()), t->tid(), selected ? s.selected_frame() : 0});
    }
    std::sort(out.begin(), out.end(), [](const member_thread& a, const member_thread& b) { return a.number < b.number; });
    return out;
}

std::optional<std::vector<member_thread>> openmp_threads(session& s, std::string& why) {
    std::vector<member_thread> out;
    try {
        auto& as = ompd::require_ompd(s);
        auto num_icv = as.find_icv("thread-num-var");
        if (!num_icv) {
            why = "OMPD has no thread-num-var ICV";
            return std::nullopt;
        }
        std::set<int> seen;
        for (const auto& m : all_threads(s)) {
            auto t = as.thread_of(m.tid);
            if (!t) {
                continue;   // not an OpenMP thread
            }
            auto num = as.icv(*t, *num_icv).number;
            if (!num) {
                why = fmt::format("no OpenMP thread number for thread {}", m.number);
                return std::nullopt;
            }
            if (!seen.insert(static_cast<int>(*num)).second) {
                why = "OpenMP thread numbers repeat across the teams of nested regions";
                return std::nullopt;
            }
            out.push_back({static_cast<int>(*num), m.tid, m.fallback_frame});
        }
    } catch (const std::exception& e) {
        why = e.what();
        return std::nullopt;
    }
    if (out.empty()) {
        why = "no OpenMP thread";
        return std::nullopt;
    }
    std::sort(out.begin(), out.end(), [](const member_thread& a, const member_thread& b) { return a.number < b.number; });
    return out;
}

}  // namespace ompdbg::debugger::compare
