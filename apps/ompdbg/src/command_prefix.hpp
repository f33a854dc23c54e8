#pragma once
/// A prefix command's sub-table (`info`, `set`, `catch`) for command groups that register
/// sub-commands in any order: command_table::prefix() does the work.

#include <string>

#include "command_table.hpp"

namespace ompdbg::app {

/// The sub-table of prefix command `name` in `t`, created (with `summary`) when absent.
inline command_table& prefix_table(command_table& t, const std::string& name, const std::string& summary) {
    return t.prefix(name, {}, summary);
}

}  // namespace ompdbg::app
