// gdb's hooks around commands and stops (user_hooks.hpp), as gdb 13's cli-script.c
// (execute_cmd_pre_hook, execute_cmd_post_hook) and infrun.c's normal_stop run them.

#include "user_hooks.hpp"

#include <fmt/format.h>

#include "command_block.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

// The hook `hooks` ties to `name`, marked running while it runs (gdb's hook_in), so that
// the command inside its own hook runs without it.
void run_hook(session& s, std::map<std::string, std::string>& hooks, const std::string& name) {
    script_state& st = s.script();
    auto tied = hooks.find(name);
    if (tied == hooks.end() || st.hooks_running.count(name) != 0) {
        return;
    }
    auto body = st.user_commands.find(tied->second);
    if (body == st.user_commands.end()) {
        return;
    }
    auto keep = body->second;   // the hook may redefine itself while it runs
    st.hooks_running.insert(name);
    struct done {
        script_state& st;
        const std::string& name;
        ~done() { st.hooks_running.erase(name); }
    } finished{st, name};
    run_user_command(s, *keep, "");
}

}  // namespace

command_handler with_hooks(std::string name, command_handler handler) {
    return [name = std::move(name), handler = std::move(handler)](session& s, std::string_view args) {
        run_hook(s, s.script().pre_hooks, name);
        handler(s, args);
        run_hook(s, s.script().post_hooks, name);
    };
}

void tie_hook(session& s, const std::string& name) {
    bool pre = name.rfind("hook-", 0) == 0;
    bool post = name.rfind("hookpost-", 0) == 0;
    if (!pre && !post) {
        return;
    }
    std::string target = name.substr(pre ? 5 : 9);
    script_state& st = s.script();
    auto& hooks = pre ? st.pre_hooks : st.post_hooks;
    // gdb's `stop` is a command that does nothing but carry hook-stop.
    if (target == "stop") {
        hooks["stop"] = name;
        return;
    }
    const command* c = target.empty() ? nullptr : s.commands().find(target);
    if (c == nullptr) {
        s.out().error(fmt::format("warning: Your new `{}' command does not hook any existing command.", name));
        if (!s.query("Proceed? ")) {
            error::send("Not confirmed.");
        }
        return;
    }
    hooks[c->name] = name;
    if (st.hooked.insert(c->name).second) {
        if (command* m = s.commands().find_mutable(c->name); m != nullptr && m->handler) {
            m->handler = with_hooks(m->name, m->handler);
        }
    }
}

void run_stop_hook(session& s) {
    try {
        run_hook(s, s.script().pre_hooks, "stop");
    } catch (const std::exception& e) {
        s.out().error(fmt::format("Error while running hook_stop:\n{}", e.what()));
    }
}

}  // namespace ompdbg::app
