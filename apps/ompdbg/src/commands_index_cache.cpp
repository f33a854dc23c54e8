// gdb's `set/show index-cache`: the table of each file's function names kept on disk by
// build-id (ompdbg/dwarf/index_cache.hpp). Same commands and text as gdb 13; ompdbg's cache
// is on by default (gdb's is off), and `show index-cache stats` says in one more line why
// nothing could be written, when a write failed.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "command_args.hpp"
#include "command_prefix.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/index_cache.hpp"
#include "session.hpp"

namespace ompdbg::app {

namespace index_cache = dwarf::index_cache;

namespace {

std::string enabled_text() { return fmt::format("The index cache is {}.", index_cache::enabled() ? "on" : "off"); }

std::string directory_text() {
    auto dir = index_cache::directory();
    return fmt::format("The directory of the index cache is \"{}\".", dir ? dir->string() : "");
}

/// gdb's two lines (indented by two more spaces inside `show index-cache`), then why the
/// cache could not be written, if it could not.
void show_stats(session& s, const std::string& indent) {
    auto st = index_cache::stats();
    s.out().line(fmt::format("{}  Cache hits (this session): {}", indent, st.hits));
    s.out().line(fmt::format("{}Cache misses (this session): {}", indent, st.misses));
    if (auto why = index_cache::problem()) {
        s.out().line(indent + *why);
    }
}

// A filename setting as gdb reads it: ~ is the home directory, a relative path is taken
// from the current directory.
std::filesystem::path directory_argument(std::string_view args) {
    std::string a = trim_copy(args);
    if (a.empty()) {
        error::send("Argument required (filename to set it to.).");
    }
    const char* home = std::getenv("HOME");
    if ((a == "~" || a.starts_with("~/")) && home != nullptr) {
        a = std::string(home) + a.substr(1);
    }
    std::error_code ec;
    auto abs = std::filesystem::absolute(a, ec);
    return ec ? std::filesystem::path(a) : abs.lexically_normal();
}

}  // namespace

void register_index_cache_commands(command_table& t) {
    command_table& set = prefix_table(t, "set", "Evaluate expression EXP and assign result to variable VAR.");
    command_table& show = prefix_table(t, "show", "Generic command for showing things about the debugger.");
    command_table& set_ic = set.prefix("index-cache", {}, "Set index-cache options.");
    command_table& show_ic = show.prefix("index-cache", {}, "Show index-cache options.");
    set_ic.add(command{"enabled", {}, "Enable the index cache.",
                       "set index-cache enabled on|off\nWhen on, the names of each file's functions are read from "
                       "and written to the index cache\n(on by default in ompdbg; OMPDBG_INDEX_CACHE=off turns it "
                       "off at start).",
                       [](session&, std::string_view a) { index_cache::set_enabled(parse_on_off(a)); }, false, nullptr});
    set_ic.add(command{"directory", {}, "Set the directory of the index cache.",
                       "set index-cache directory DIR\nThe index cache's files are kept in DIR (default "
                       "$XDG_CACHE_HOME/ompdbg/index-cache,\nor ~/.cache/ompdbg/index-cache).",
                       [](session&, std::string_view a) { index_cache::set_directory(directory_argument(a)); },
                       false, nullptr});
    show_ic.add(command{"enabled", {}, "Show whether the index cache is enabled.", "show index-cache enabled",
                        [](session& s, std::string_view) { s.out().line(enabled_text()); }, false, nullptr});
    show_ic.add(command{"directory", {}, "Show the directory of the index cache.", "show index-cache directory",
                        [](session& s, std::string_view) { s.out().line(directory_text()); }, false, nullptr});
    show_ic.add(command{"stats", {}, "Show some stats about the index cache.", "show index-cache stats",
                        [](session& s, std::string_view) { show_stats(s, ""); }, false, nullptr});
    // gdb 13's `set index-cache on|off` (deprecated there, with its warning) and its
    // `show index-cache`: every setting, then the state in a sentence.
    set.find_mutable("index-cache")->handler = [](session& s, std::string_view a) {
        std::string v = trim_copy(a);
        if (v != "on" && v != "off") {
            error::send("\"set index-cache\" must be followed by the name of a subcommand.");
        }
        s.out().line(fmt::format("Warning: 'set index-cache {}', an alias for the command 'set index-cache enabled', "
                                 "is deprecated.",
                                 v));
        s.out().line(fmt::format("Use 'set index-cache enabled {}'.", v));
        s.out().line("");
        index_cache::set_enabled(v == "on");
    };
    show.find_mutable("index-cache")->handler = [](session& s, std::string_view a) {
        if (!trim(a).empty()) {
            error::send(fmt::format("Undefined show index-cache command: \"{}\".  Try \"help show index-cache\".",
                                    trim_copy(a)));
        }
        s.out().line("index-cache directory:  " + directory_text());
        s.out().line("index-cache enabled:  " + enabled_text());
        s.out().line("index-cache stats:  ");
        show_stats(s, "  ");
        s.out().line("");
        s.out().line(fmt::format("The index cache is currently {}.", index_cache::enabled() ? "enabled" : "disabled"));
    };
}

}  // namespace ompdbg::app
