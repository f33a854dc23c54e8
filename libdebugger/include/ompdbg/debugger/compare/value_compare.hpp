#pragma once
/// The model of `omp compare`, `thread compare` and `mpi compare` (issue 20): the values one
/// expression has in many members (threads, ranks), grouped by value with a tolerance for
/// floating point, the members that could not evaluate it grouped by reason, a summary of
/// scalar numbers, and for arrays, structs and containers how each minority value differs
/// from the majority's. Data in, data out: no session, no text layout (the commands format).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/value_tree.hpp"

namespace ompdbg::debugger::compare {

/// When two floating-point numbers count as equal: |a - b| <= absolute, or
/// |a - b| <= relative * max(|a|, |b|). Both 0: only equal numbers. Integers, pointers
/// and text are always compared exactly.
struct tolerance {
    long double absolute = 0;
    long double relative = 0;
    bool close(long double a, long double b) const;
};

/// What one member (an OpenMP thread, a thread, a rank; `member` is its number) gave.
struct sample {
    int member = 0;
    std::optional<dwarf::value_tree> value;   ///< nullopt: not evaluated, see `message`
    std::string message;                      ///< the evaluator's error ("No symbol ...")
};

/// How the representative of a minority group differs from the majority's (aggregates).
struct difference {
    std::size_t differing = 0;   ///< leaves that differ (missing or extra elements count)
    std::size_t total = 0;       ///< leaves of the majority value
    std::string first;           ///< path of the first one, after the expression ("[5]", ".y")
    bool fields = false;         ///< the value is a struct: its parts are fields
    /// Containers and arrays of another length: (this group's, the majority's).
    std::optional<std::pair<std::size_t, std::size_t>> lengths;
};

struct value_group {
    std::vector<int> members;     ///< ascending
    dwarf::value_tree value;      ///< the representative: the smallest number, else the first member's value
    /// Numbers merged by the tolerance: the smallest and largest, as printed (empty when
    /// every member holds the same number).
    std::string low_text, high_text;
    std::optional<difference> differs;   ///< set for groups after the first, aggregates only
};

/// Members that could not evaluate the expression, for one reason.
struct error_group {
    std::string reason;           ///< "not in scope", "optimized out", "cannot access memory", ...
    std::string message;          ///< the first member's full message
    std::vector<int> members;
};

/// Scalar numbers only (every evaluated member holds an integer or a floating number).
struct summary {
    std::size_t count = 0;
    long double min = 0, max = 0, mean = 0;
    std::string min_text, max_text;   ///< as printed
    std::vector<int> min_members, max_members;
};

struct result {
    std::vector<value_group> groups;   ///< largest first; ties: lowest member first
    std::vector<error_group> errors;   ///< largest first
    std::optional<summary> stats;
    /// One value and no member without one (what --expect-equal asks).
    bool all_equal() const { return groups.size() <= 1 && errors.empty(); }
};

/// Groups `samples` (see the file comment). Numbers merged by a tolerance form groups from
/// the smallest up: a number joins the group of the smallest number it is close to.
result compare_samples(const std::vector<sample>& samples, const tolerance& tol);

/// Whether `a` and `b` hold the same value: same shape, numbers equal within `tol`,
/// everything else by its text.
bool same_value(const dwarf::value_tree& a, const dwarf::value_tree& b, const tolerance& tol);

/// How `v` differs from `majority` (see `difference`).
difference diff(const dwarf::value_tree& v, const dwarf::value_tree& majority, const tolerance& tol);

/// The short reason for an evaluation error message: "not in scope" (No symbol ...),
/// "optimized out", "cannot access memory", "no frame"; otherwise the message itself.
std::string error_reason(const std::string& message);

}  // namespace ompdbg::debugger::compare
