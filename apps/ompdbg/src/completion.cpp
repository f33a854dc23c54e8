#include "completion.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::app {

namespace {

// Commands whose arguments name symbols (or source locations), as gdb completes them.
bool takes_symbol(const std::string& path) {
    static const char* const names[] = {"break",  "tbreak", "print",   "output",  "call",   "inspect",
                                        "list",   "ptype",  "whatis",  "until",   "advance", "display",
                                        "x",      "watch",  "rwatch",  "awatch",  "info line",
                                        "info address", "info symbol", "set variable", "info scope",
                                        "disassemble", "jump"};
    return std::find(std::begin(names), std::end(names), path) != std::end(names);
}

bool takes_file(const std::string& path) {
    return path == "run" || path == "file" || path == "start" || path == "source" || path == "exec-file" ||
           path == "symbol-file" || path == "cd" || path == "shell";
}

std::vector<std::string_view> words_of(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) {
            ++i;
        }
        std::size_t start = i;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
            ++i;
        }
        if (i > start) {
            out.push_back(line.substr(start, i - start));
        }
    }
    return out;
}

void add_if_prefix(std::set<std::string>& out, std::string_view word, const std::string& name) {
    if (!name.empty() && name.compare(0, word.size(), word) == 0) {
        out.insert(name);
    }
}

void symbol_candidates(session& s, std::string_view word, bool with_files, std::set<std::string>& out) {
    std::vector<std::shared_ptr<dwarf::elf_file>> elves;
    if (tracer::target* tgt = s.target()) {
        for (const tracer::loaded_module& m : tgt->modules()) {
            if (m.elf) {
                elves.push_back(m.elf);
            }
        }
    } else if (s.program()) {
        try {
            elves.push_back(s.elf_for(*s.program()));
        } catch (const std::exception&) {
        }
    }
    for (const auto& elf : elves) {
        for (const dwarf::symbol& sym : elf->symbols()) {
            // Mangled C++ names are not what a user types; gdb offers the demangled ones.
            if (sym.kind == dwarf::symbol_kind::other || sym.name.rfind("_Z", 0) == 0) {
                continue;
            }
            add_if_prefix(out, word, sym.name);
        }
        if (!with_files) {
            continue;
        }
        try {
            if (dwarf::debug_info* dbg = elf->debug()) {
                for (const std::string& f : dbg->source_files()) {
                    auto slash = f.rfind('/');
                    add_if_prefix(out, word, slash == std::string::npos ? f : f.substr(slash + 1));
                }
            }
        } catch (const std::exception&) {
        }
    }
    // Locals and parameters of the selected frame.
    try {
        if (s.process() && s.process()->is_alive()) {
            frame_context ctx = frame_context::for_selection(s);
            if (ctx.has_frame()) {
                for (bool params : {true, false}) {
                    for (const dwarf::variable& v : ctx.frame_variables(params)) {
                        add_if_prefix(out, word, v.name);
                    }
                }
            }
        }
    } catch (const std::exception&) {
    }
}

}  // namespace

std::string_view completion_word(std::string_view line) {
    std::size_t pos = line.find_last_of(completion_word_breaks);
    return pos == std::string_view::npos ? line : line.substr(pos + 1);
}

completion complete_line(session& s, std::string_view line) {
    completion result;
    std::string_view word = completion_word(line);
    std::vector<std::string_view> words = words_of(line.substr(0, line.size() - word.size()));
    std::set<std::string> found;
    try {
        const command_table* table = &s.commands();
        std::string path;
        std::size_t i = 0;
        // Descend through the complete words: a command, then sub-commands of prefixes.
        while (i < words.size()) {
            if (table == nullptr) {
                break;
            }
            const command* c = table->find(words[i]);
            if (c == nullptr) {
                return result;
            }
            path += (path.empty() ? "" : " ") + c->name;
            table = c->subcommands.get();
            ++i;
        }
        if (i == 0 || (table != nullptr && i == words.size())) {
            // The word is a command name (or a sub-command of the prefix typed so far).
            const command_table& t = table ? *table : s.commands();
            for (const command& c : t.all()) {
                add_if_prefix(found, word, c.name);
            }
            result.kind = completion_kind::command;
            // A prefix command that is also a command itself (`info` alone, `thread 2`)
            // may take arguments; sub-command names are still the useful candidates.
        } else if (takes_file(path)) {
            result.kind = completion_kind::file;
        } else if (takes_symbol(path)) {
            symbol_candidates(s, word, path == "break" || path == "tbreak" || path == "list" || path == "until" ||
                                           path == "advance",
                              found);
            result.kind = completion_kind::symbol;
        }
    } catch (const std::exception&) {
        // An ambiguous word ("Ambiguous command") completes to nothing.
        return completion{};
    }
    result.candidates.assign(found.begin(), found.end());
    return result;
}

}  // namespace ompdbg::app
