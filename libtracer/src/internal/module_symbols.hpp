#pragma once
// Finding a symbol by name in every loaded module of a target (the starter interfaces,
// MPIR and MPI2DD, are defined in the executable or in one of its libraries).

#include <optional>
#include <string_view>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer::internal {

/// The run-time address of the first defined symbol `name` of any module, nullopt if none.
std::optional<virt_addr> find_module_symbol(target& t, std::string_view name);

}  // namespace ompdbg::tracer::internal
