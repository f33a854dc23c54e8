#pragma once
/// Finding (or creating) a prefix command's sub-table (`info`, `set`) so that each command
/// group can register its sub-commands whatever the order of registration.

#include <memory>
#include <string>

#include "command_table.hpp"

namespace ompdbg::app {

/// The sub-table of prefix command `name` in `t`; creates the prefix command (with
/// `summary`) when it does not exist yet.
inline command_table& prefix_table(command_table& t, const std::string& name, const std::string& summary) {
    for (const command& c : t.all()) {
        if (c.name == name && c.subcommands) {
            return *c.subcommands;
        }
    }
    command c;
    c.name = name;
    c.summary = summary;
    c.subcommands = std::make_shared<command_table>();
    auto sub = c.subcommands;
    t.add(std::move(c));
    return *sub;
}

}  // namespace ompdbg::app
