#include "command_table.hpp"

#include <algorithm>

#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

void command_table::add(command c) {
    auto same = [&](const command& o) { return o.name == c.name; };
    if (auto it = std::find_if(commands_.begin(), commands_.end(), same); it != commands_.end()) {
        // A prefix created earlier by prefix() keeps its subcommands.
        if (!c.subcommands) {
            c.subcommands = it->subcommands;
        }
        *it = std::move(c);
        return;
    }
    commands_.push_back(std::move(c));
}

command_table& command_table::prefix(const std::string& name, std::vector<std::string> aliases,
                                     std::string summary) {
    for (auto& c : commands_) {
        if (c.name == name) {
            if (!c.subcommands) {
                c.subcommands = std::make_shared<command_table>();
            }
            for (auto& a : aliases) {
                if (std::find(c.aliases.begin(), c.aliases.end(), a) == c.aliases.end()) {
                    c.aliases.push_back(a);
                }
            }
            if (c.summary.empty()) {
                c.summary = summary;
            }
            return *c.subcommands;
        }
    }
    command c;
    c.name = name;
    c.aliases = std::move(aliases);
    c.summary = std::move(summary);
    c.subcommands = std::make_shared<command_table>();
    commands_.push_back(std::move(c));
    return *commands_.back().subcommands;
}

// gdb's lookup: an exact name or alias wins; otherwise a prefix must match exactly one
// command name (aliases are not prefix-matched, as in gdb where `b` is an alias but `bre`
// is a prefix of `break`).
const command* command_table::find(std::string_view word) const {
    if (word.empty()) {
        return nullptr;
    }
    for (const auto& c : commands_) {
        if (c.name == word) {
            return &c;
        }
    }
    for (const auto& c : commands_) {
        for (const auto& a : c.aliases) {
            if (a == word) {
                return &c;
            }
        }
    }
    std::vector<const command*> matches;
    for (const auto& c : commands_) {
        if (c.name.size() > word.size() && c.name.compare(0, word.size(), word) == 0) {
            matches.push_back(&c);
        }
    }
    if (matches.empty()) {
        return nullptr;
    }
    if (matches.size() == 1) {
        return matches.front();
    }
    std::sort(matches.begin(), matches.end(),
              [](const command* a, const command* b) { return a->name < b->name; });
    std::string names;
    for (const auto* m : matches) {
        names += names.empty() ? "" : ", ";
        names += m->name;
    }
    error::send("Ambiguous command \"" + std::string(word) + "\": " + names + ".");
}

}  // namespace ompdbg::app
