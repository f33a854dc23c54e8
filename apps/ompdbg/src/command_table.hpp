#pragma once
/// The command table: one entry per command (name, aliases, help, handler) that both
/// dispatches and generates `help`. Prefix commands (`info`, `thread apply`, `set`) hold a
/// sub-table. Lookup accepts unique prefixes and gdb's aliases (b, c, n, s, p, bt, i r).

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::app {

class session;

/// A handler throws ompdbg::error for a failure the user caused; the message is printed as
/// one line and the command counts as failed (batch mode exit status).
using command_handler = std::function<void(session&, std::string_view args)>;

struct command {
    std::string name;
    std::vector<std::string> aliases;      ///< exact-match aliases ("b", "where")
    std::string summary;                   ///< one line for `help`
    std::string help;                      ///< full text for `help NAME`
    command_handler handler;               ///< may be empty for pure prefix commands
    bool repeat_on_enter = false;          ///< Enter repeats it (next, step, x, list)
    std::shared_ptr<class command_table> subcommands;   ///< `info`, `set`, `thread apply`...
};

class command_table {
public:
    /// Adds `c`, replacing a command of the same name.
    void add(command c);
    /// The sub-table of prefix command `name` (`info`, `thread`...), created with `aliases`
    /// and `summary` when absent, so several command groups can add subcommands to it.
    command_table& prefix(const std::string& name, std::vector<std::string> aliases = {},
                          std::string summary = {});
    /// Mutable access for a group that adds a handler to an existing prefix command.
    command* find_mutable(std::string_view word) { return const_cast<command*>(find(word)); }
    /// Exact name, alias, or unique prefix. Throws ompdbg::error
    /// "Ambiguous command \"x\": xa, xb." ; nullptr when nothing matches.
    const command* find(std::string_view word) const;
    const std::vector<command>& all() const { return commands_; }

private:
    std::vector<command> commands_;
};

}  // namespace ompdbg::app
