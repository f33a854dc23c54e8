// `info locals` in an outlined OpenMP region, printed: the variables and their data-sharing
// come from libdebugger's omp/outlined_locals (the DMPL library's demangling, the DWARF
// locations and the routine's code).

#include "commands_dmpl_shared.hpp"

#include <nlohmann/json.hpp>

#include "ompdbg/debugger/omp/outlined_locals.hpp"
#include "session.hpp"

namespace ompdbg::app::dmpl_impl {

bool outlined_locals(session& s) {
    auto locals = debugger::outlined_region_locals(s);
    if (!locals) {
        return false;
    }
    nlohmann::json js = nlohmann::json::array();
    for (const auto& v : *locals) {
        s.out().line(v.name + " = " + v.value + (v.scoping.empty() ? "" : "  (" + v.scoping + ")"));
        js.push_back({{"name", v.name}, {"value", v.value}, {"scoping", v.scoping}});
    }
    if (locals->empty()) {
        s.out().line("No locals.");
    }
    s.out().field("locals", js);
    return true;
}

}  // namespace ompdbg::app::dmpl_impl
