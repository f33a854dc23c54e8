// gdb's `$` values of a frame context: the value history (`$`, `$1`, `$$2`) and the
// convenience variables (`$foo` set by the user, `$_siginfo`, `$_thread`, `$bpnum`
// computed when asked).

#include "ompdbg/debugger/eval/frame_context.hpp"

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ompdbg/debugger/run/siginfo_type.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

std::optional<dwarf::value> frame_context::history(int index) {
    return s_.history(index);
}

int frame_context::history_size() {
    int n = 0;
    while (s_.history(n + 1)) {
        ++n;
    }
    return n;
}

namespace {

/// The session's convenience variables, kept in its model_state.
struct convenience_variables_state {
    std::map<std::string, dwarf::value, std::less<>> vars;
};

std::map<std::string, dwarf::value, std::less<>>& convenience_variables(session& s) {
    return s.model_state().get<convenience_variables_state>().vars;
}

}  // namespace

void set_convenience_variable(session& s, std::string_view name, std::optional<dwarf::value> v) {
    auto& vars = convenience_variables(s);
    if (v) {
        vars[std::string(name)] = std::move(*v);
    } else if (auto it = vars.find(name); it != vars.end()) {
        vars.erase(it);
    }
}

dwarf::value int_value(std::int64_t n) {
    dwarf::value v;
    v.val_type = dwarf::type::make_base("int", 4, dwarf::base_encoding::signed_int);
    v.synthetic_type_name = "int";
    auto i = static_cast<std::int32_t>(n);
    v.bytes.resize(4);
    std::memcpy(v.bytes.data(), &i, 4);
    return v;
}

std::optional<dwarf::value> frame_context::convenience(std::string_view name) {
    if (name == "_siginfo") {
        return siginfo_value(s_, tid_ != 0 ? tid_ : s_.selected_tid());
    }
    // Computed when asked, as gdb's lazy internal variables: the selected thread's number
    // (0 without a process) and the number of the last breakpoint set (void before one).
    if (name == "_thread") {
        auto* t = s_.target();
        bool live = t != nullptr && (!t->is_live() || (s_.process() && s_.process()->is_alive()));
        return int_value(live ? s_.thread_number(s_.selected_tid()) : 0);
    }
    if (name == "bpnum" && !convenience_variables(s_).count("bpnum")) {
        if (s_.last_breakpoint_number() == 0) {
            return std::nullopt;
        }
        return int_value(s_.last_breakpoint_number());
    }
    auto& vars = convenience_variables(s_);
    if (auto it = vars.find(name); it != vars.end()) {
        return it->second;
    }
    return std::nullopt;
}

void frame_context::set_convenience(std::string_view name, const dwarf::value& v) {
    convenience_variables(s_)[std::string(name)] = v;
}

}  // namespace ompdbg::debugger
