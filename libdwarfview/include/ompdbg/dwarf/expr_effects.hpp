#pragma once
/// Whether evaluating an expression changes the target: what commands that evaluate one
/// expression in many threads or processes (`omp compare`, `rank where`) must refuse.

#include <optional>
#include <string>

#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {

/// The first side effect evaluating `e` would have, as a short noun phrase: "an
/// assignment (x = 1)", "an increment (x++)", "a decrement (--x)", "a function call
/// (f(2))"; nullopt when it only reads. Operands of sizeof are not evaluated and do not
/// count, as in C.
std::optional<std::string> side_effect_of(const expression& e);

}  // namespace ompdbg::dwarf
