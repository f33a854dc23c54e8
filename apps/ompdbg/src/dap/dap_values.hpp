#pragma once
/// Values as the Variables view, watches and hovers show them: the text `print` shows, the
/// type, and a variablesReference for the children of structs, unions, classes, arrays,
/// pointers to records and C++ containers (dwarf::value_children).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dap/dap_adapter.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"

namespace ompdbg::app::dap {

/// The evaluation context of frame `f` (its thread's stack as the session has it). Throws
/// when the frame is gone.
frame_context context_of(adapter& a, const frame_ref& f);

/// A DAP Variable for `expression` shown as `name` in frame `f`; an unreadable value is
/// shown as "<error: ...>".
nlohmann::json variable_json(adapter& a, const frame_ref& f, const std::string& name, const std::string& expression);

/// The children of the value `parent` stands for (empty for a scalar): fields, base
/// classes, elements of arrays and C++ containers, a pointer's record.
std::vector<nlohmann::json> child_variables(adapter& a, const variable_ref& parent);

}  // namespace ompdbg::app::dap
