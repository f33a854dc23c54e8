#pragma once
/// Logging channels (LLDB's `log enable`): off by default, enabled with --log=ptrace,plugin
/// or OMPDBG_LOG=ptrace,plugin. Log lines go to stderr prefixed with the channel; this is
/// diagnostics for developers, not output for users, so libraries may use it.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace ompdbg::log {

enum class channel : unsigned { ptrace = 1, wait = 2, dwarf = 4, plugin = 8, unwind = 16, cli = 32 };

namespace detail {
inline unsigned& mask() {
    static unsigned m = [] {
        unsigned v = 0;
        if (const char* env = std::getenv("OMPDBG_LOG")) {
            std::string_view s(env);
            auto has = [&](std::string_view n) { return s.find(n) != std::string_view::npos || s == "all"; };
            if (has("ptrace")) v |= 1;
            if (has("wait")) v |= 2;
            if (has("dwarf")) v |= 4;
            if (has("plugin")) v |= 8;
            if (has("unwind")) v |= 16;
            if (has("cli")) v |= 32;
        }
        return v;
    }();
    return m;
}
}  // namespace detail

/// Enables the channels named in a comma-separated list ("ptrace,plugin" or "all").
inline void enable(std::string_view list) {
    auto has = [&](std::string_view n) { return list.find(n) != std::string_view::npos || list == "all"; };
    unsigned& m = detail::mask();
    if (has("ptrace")) m |= 1;
    if (has("wait")) m |= 2;
    if (has("dwarf")) m |= 4;
    if (has("plugin")) m |= 8;
    if (has("unwind")) m |= 16;
    if (has("cli")) m |= 32;
}

inline bool enabled(channel c) { return (detail::mask() & static_cast<unsigned>(c)) != 0; }

template <typename... Args>
void write(channel c, fmt::format_string<Args...> f, Args&&... args) {
    if (!enabled(c)) return;
    static constexpr const char* names[] = {"ptrace", "wait", "dwarf", "plugin", "unwind", "cli"};
    unsigned idx = 0;
    for (unsigned v = static_cast<unsigned>(c); v > 1; v >>= 1) ++idx;
    std::fprintf(stderr, "[%s] %s\n", names[idx], fmt::format(f, std::forward<Args>(args)...).c_str());
}

}  // namespace ompdbg::log
