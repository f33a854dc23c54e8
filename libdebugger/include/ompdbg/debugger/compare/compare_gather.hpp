#pragma once
/// Evaluating one expression in many members for `omp compare`, `thread compare`, `mpi
/// compare`, `thread where` and `rank where` (issue 20): which threads or ranks take part,
/// and in which frame each evaluates (the innermost frame of the function of the selected
/// frame, else the member's own selected frame). Returns samples for value_compare.hpp.

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/compare/value_compare.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

class session;

namespace compare {

/// What the members are numbered by.
enum class member_kind { omp_thread, thread, rank };

/// The function every member looks for on its stack: the selected frame's.
struct frame_rule {
    std::string function;   ///< empty: no function (each member uses its selected frame)
    std::string module;     ///< the path of its module
};

/// One member to evaluate in: a thread of the current process (`tid`) and the frame it
/// uses when the rule's function is not on its stack.
struct member_thread {
    int number = 0;          ///< OpenMP thread number, gdb thread number or rank
    pid_t tid = 0;
    int fallback_frame = 0;
};

/// The selected frame's function (current inferior, selected thread and frame). Never
/// throws: without a stack the rule is empty.
frame_rule selection_rule(session& s);

/// Parses `text` in the selected frame's context (casts need it) and refuses side effects:
/// throws "Refusing \"x++\": an increment (x++) would run in every thread." (`where`:
/// "thread", "rank") and the parser's syntax errors.
std::shared_ptr<const dwarf::expression> parse_for_members(session& s, const std::string& text,
                                                           const std::string& where);

/// Evaluates `e` in `m` (a thread of the current inferior) by the frame rule. A value is
/// taken apart for comparison; an error (not in scope, memory, optimized out) is kept in
/// the sample's message.
sample evaluate_value(session& s, const member_thread& m, const frame_rule& rule, const dwarf::expression& e,
                      const dwarf::format_options& opts);

/// The same for a condition: true/false, or the error message in `error`.
std::optional<bool> evaluate_truth(session& s, const member_thread& m, const frame_rule& rule,
                                   const dwarf::expression& e, std::string& error);

/// Every thread of the current target, numbered as gdb numbers them; the selected thread
/// keeps its selected frame, the others frame 0.
std::vector<member_thread> all_threads(session& s);

/// The OpenMP threads of the current process numbered by their OpenMP thread number.
/// nullopt, with the reason in `why`, when OMPD cannot tell them (no OMPD-enabled runtime,
/// OMP_DEBUG unset) or when thread numbers repeat (nested teams): then callers compare
/// every thread instead.
std::optional<std::vector<member_thread>> openmp_threads(session& s, std::string& why);

}  // namespace compare
}  // namespace ompdbg::debugger
