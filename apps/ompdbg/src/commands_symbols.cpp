// gdb's symbol listings: info functions, info variables, info types [-q] [-n] [REGEX] and
// info sources [-basename | -dirname] [REGEX], in gdb 13's shapes: one `File F:` block per
// source file (global symbols, then static ones, each sorted by name; `LINE:\tdeclaration`),
// then the `Non-debugging symbols:` of the ELF symbol tables, by address.
#include <regex.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <dwarf.h>
#include <fmt/format.h>

#include "command_args.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::app {

namespace {

/// A compiled POSIX basic regular expression, as gdb's search_symbols compiles it (REG_NOSUB).
class posix_regex {
public:
    explicit posix_regex(const std::string& pattern) {
        int rc = ::regcomp(&re_, pattern.c_str(), REG_NOSUB);
        if (rc != 0) {
            char buf[256];
            ::regerror(rc, &re_, buf, sizeof buf);
            error::send(fmt::format("Invalid regexp: {}", buf));
        }
    }
    ~posix_regex() { ::regfree(&re_); }
    posix_regex(const posix_regex&) = delete;
    posix_regex& operator=(const posix_regex&) = delete;
    bool search(const std::string& text) const { return ::regexec(&re_, text.c_str(), 0, nullptr, 0) == 0; }

private:
    ::regex_t re_{};
};

struct listing_options {
    bool quiet = false;          ///< -q: no header line
    bool no_minimal = false;     ///< -n: no non-debugging symbols
    std::string regex;           ///< empty: everything
};

/// `[-q] [-n] [--] [REGEX]` (`allow_n`: info functions/variables); gdb's error otherwise.
listing_options parse_listing_args(std::string_view args, bool allow_n) {
    listing_options o;
    std::string_view rest = trim(args);
    while (!rest.empty() && rest.front() == '-') {
        auto end = rest.find_first_of(" \t");
        std::string_view word = rest.substr(0, end);
        if (word == "--") {
            rest = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end));
            break;
        }
        if (word == "-q") {
            o.quiet = true;
        } else if (word == "-n" && allow_n) {
            o.no_minimal = true;
        } else {
            break;   // a regex that starts with '-'
        }
        rest = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end));
    }
    o.regex = std::string(rest);
    return o;
}

/// The modules whose symbols are listed: the live process' (or the core's), else the program.
std::vector<std::pair<std::shared_ptr<dwarf::elf_file>, std::string>> listed_files(session& s) {
    std::vector<std::pair<std::shared_ptr<dwarf::elf_file>, std::string>> out;
    if (tracer::target* t = s.target()) {
        for (const auto& m : t->modules()) {
            if (m.elf) {
                out.emplace_back(m.elf, m.path.string());
            }
        }
    } else if (s.program()) {
        out.emplace_back(s.elf_for(*s.program()), s.program()->string());
    }
    return out;
}

/// `type` with a declarator for `name` as gdb's C printer writes it: "int global_array[5]",
/// "const char *global_name", "int (*fp)(int, int)".
std::string declarator(const std::string& type, const std::string& name) {
    for (const char* hole : {"(*)", "(&)"}) {
        if (auto at = type.find(hole); at != std::string::npos) {
            return type.substr(0, at + 2) + name + type.substr(at + 2);
        }
    }
    if (auto at = type.find(" ["); at != std::string::npos) {
        return type.substr(0, at) + " " + name + type.substr(at + 1);
    }
    if (!type.empty() && (type.back() == '*' || type.back() == '&')) {
        return type + name;
    }
    return type + " " + name;
}

std::optional<dwarf::type> type_attribute(Dwarf_Die die) {
    Dwarf_Attribute attr;
    Dwarf_Die t;
    if (dwarf_attr_integrate(&die, DW_AT_type, &attr) == nullptr || dwarf_formref_die(&attr, &t) == nullptr) {
        return std::nullopt;
    }
    return dwarf::type(t);
}

/// One printed entry: the name gdb sorts and matches, and the text after "LINE:\t".
struct entry {
    std::string file;
    int block = 0;   ///< 0 global, 1 static (gdb's block order)
    std::string name;
    int line = 0;
    std::string text;
    bool operator<(const entry& o) const {
        return std::tie(file, block, name, line, text) < std::tie(o.file, o.block, o.name, o.line, o.text);
    }
};

/// The name gdb lists a symbol by, and matches the REGEX against.
std::string listed_name(const dwarf::listed_symbol& sym, dwarf::symbol_listing kind) {
    if (kind == dwarf::symbol_listing::functions && dwarf::type(sym.die).is_cplus()) {
        dwarf::function f;
        f.name = sym.name;
        f.linkage_name = sym.linkage_name;
        f.die = sym.die;
        return function_print_name(f);
    }
    return sym.name;
}

/// The declaration of a listed symbol named `print` (listed_name) as gdb prints it. Only
/// for the symbols that match: naming every type of a large program is most of the work.
std::string describe(const dwarf::listed_symbol& sym, dwarf::symbol_listing kind, const std::string& print) {
    const bool cplus = dwarf::type(sym.die).is_cplus();
    const std::string storage = sym.is_external || kind == dwarf::symbol_listing::types ? "" : "static ";
    switch (kind) {
    case dwarf::symbol_listing::functions: {
        dwarf::type fn(sym.die);
        auto ret = fn.target();
        std::string ret_name = ret ? ret->name() : "void";
        if (cplus) {
            return storage + ret_name + " " + print + ";";
        }
        std::string params;
        for (const auto& p : fn.parameters()) {
            params += (params.empty() ? "" : ", ") + p.name();
        }
        if (fn.is_varargs()) {
            params += params.empty() ? "..." : ", ...";
        } else if (params.empty() && fn.is_prototyped()) {
            params = "void";
        }
        return storage + declarator(ret_name, sym.name + "(" + params + ")") + ";";
    }
    case dwarf::symbol_listing::variables: {
        auto t = type_attribute(sym.die);
        return storage + declarator(t ? t->name() : "int", sym.name) + ";";
    }
    case dwarf::symbol_listing::types:
        break;
    }
    if (sym.tag == DW_TAG_base_type) {
        return sym.name;
    }
    if (sym.tag == DW_TAG_typedef) {
        // gdb's c_print_typedef prints the target with its own typedefs resolved.
        auto aliased = dwarf::type(sym.die).target();
        for (int depth = 0; aliased && aliased->kind() == dwarf::type_kind::typedef_ && depth < 16; ++depth) {
            aliased = aliased->target();
        }
        return "typedef " + (aliased ? aliased->name() : "void") + " " + sym.name + ";";
    }
    return (cplus ? sym.name : dwarf::type(sym.die).name()) + ";";
}

/// gdb's minimal-symbol name: GCC's ".N" suffix of a local static dropped ("completed.0"),
/// C++ names demangled.
std::string minimal_name(const dwarf::symbol& sym) {
    std::string name = sym.name;
    if (!sym.is_global) {
        auto dot = name.rfind('.');
        if (dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
            std::all_of(name.begin() + static_cast<long>(dot) + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            name.resize(dot);
        }
    }
    return demangle(name);
}

void list_symbols(session& s, std::string_view args, dwarf::symbol_listing kind) {
    const bool types = kind == dwarf::symbol_listing::types;
    listing_options o = parse_listing_args(args, !types);
    std::unique_ptr<posix_regex> re;
    if (!o.regex.empty()) {
        re = std::make_unique<posix_regex>(o.regex);
    }
    auto matches = [&](const std::string& name) { return !re || re->search(name); };
    const char* what = kind == dwarf::symbol_listing::functions ? "functions" : types ? "types" : "variables";

    std::set<entry> entries;
    std::set<std::pair<std::uint64_t, std::string>> minimal;
    auto files = listed_files(s);
    if (files.empty()) {
        error::send("No symbol table is loaded.  Use the \"file\" command.");
    }
    for (const auto& [elf, path] : files) {
        dwarf::debug_info* dbg = elf->has_debug_info() ? elf->debug() : nullptr;
        std::set<std::string> debug_names;   // linkage and plain names with debug info
        if (dbg != nullptr) {
            for (const auto& sym : dbg->list_symbols(kind)) {
                debug_names.insert(sym.linkage_name.empty() ? sym.name : sym.linkage_name);
                try {
                    std::string name = listed_name(sym, kind);
                    if (!matches(name)) {
                        continue;
                    }
                    std::string text = describe(sym, kind, name);
                    // gdb's blocks: C++ classes and enums are global, other types static.
                    bool cplus_tag = sym.tag == DW_TAG_structure_type || sym.tag == DW_TAG_class_type ||
                                     sym.tag == DW_TAG_union_type || sym.tag == DW_TAG_enumeration_type;
                    int block = types ? (cplus_tag && dwarf::type(sym.die).is_cplus() ? 0 : 1)
                                      : (sym.is_external ? 0 : 1);
                    entries.insert(entry{source_display_name(s, sym.file), block, name, sym.line, text});
                } catch (const std::exception&) {
                    // A DIE we cannot spell (malformed DWARF) is left out, as gdb skips it.
                }
            }
        }
        if (types || o.no_minimal) {
            continue;
        }
        auto consider = [&](const dwarf::symbol& sym) {
            bool code = sym.section == dwarf::section_kind::code;
            if ((kind == dwarf::symbol_listing::functions) != code || sym.section == dwarf::section_kind::other ||
                sym.kind == dwarf::symbol_kind::tls || debug_names.count(sym.name) != 0) {
                return;
            }
            // gdb leaves out a function whose address a unit with debug info covers.
            if (code && dbg != nullptr && dbg->line_at(sym.value)) {
                return;
            }
            std::string name = minimal_name(sym);
            if (matches(name)) {
                minimal.emplace(sym.value, name);
            }
        };
        for (const auto& sym : elf->symbols()) {
            consider(sym);
        }
        if (kind == dwarf::symbol_listing::functions) {
            for (const auto& sym : elf->plt_symbols()) {
                consider(sym);
            }
        }
    }

    nlohmann::json jentries = nlohmann::json::array();
    if (!o.quiet) {
        s.out().line(o.regex.empty() ? fmt::format("All defined {}:", what)
                                     : fmt::format("All {} matching regular expression \"{}\":", what, o.regex));
    }
    const std::string* current_file = nullptr;
    const entry* previous = nullptr;
    for (const entry& e : entries) {
        // gdb keeps one of the symbols of a file and block with the same name.
        if (previous != nullptr && previous->file == e.file && previous->block == e.block && previous->name == e.name) {
            continue;
        }
        previous = &e;
        if (current_file == nullptr || *current_file != e.file) {
            s.out().line("");
            s.out().line(fmt::format("File {}:", e.file));
            current_file = &e.file;
        }
        s.out().line(e.line > 0 ? fmt::format("{}:\t{}", e.line, e.text) : fmt::format("\t{}", e.text));
        nlohmann::json j{{"file", e.file}, {"name", e.name}, {"declaration", e.text}, {"static", e.block == 1}};
        if (e.line > 0) {
            j["line"] = e.line;
        }
        jentries.push_back(std::move(j));
    }
    nlohmann::json jminimal = nlohmann::json::array();
    if (!minimal.empty()) {
        s.out().line("");
        s.out().line("Non-debugging symbols:");
        for (const auto& [addr, name] : minimal) {
            s.out().line(fmt::format("0x{:016x}  {}", addr, name));
            jminimal.push_back({{"address", fmt::format("0x{:x}", addr)}, {"name", name}});
        }
    }
    s.out().field("symbols", std::move(jentries));
    if (!types) {
        s.out().field("non_debugging", std::move(jminimal));
    }
}

/// info sources [-basename | -dirname] [--] [REGEX]: per objfile its name, a blank line, the
/// files of its units joined by ", ", and a blank line.
void cmd_info_sources(session& s, std::string_view args) {
    std::string_view rest = trim(args);
    bool basename = false, dirname = false;
    while (!rest.empty() && rest.front() == '-') {
        auto end = rest.find_first_of(" \t");
        std::string_view word = rest.substr(0, end);
        std::string_view after = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end));
        if (word == "--") {
            rest = after;
            break;
        }
        if (word == "-basename" || word == "-b") {
            basename = true;
        } else if (word == "-dirname" || word == "-d") {
            dirname = true;
        } else {
            break;
        }
        rest = after;
    }
    if (basename && dirname) {
        error::send("You cannot give both -basename and -dirname to 'info sources'.");
    }
    if ((basename || dirname) && rest.empty()) {
        error::send("Missing REGEXP for 'info sources'.");
    }
    std::unique_ptr<posix_regex> re;
    if (!rest.empty()) {
        re = std::make_unique<posix_regex>(std::string(rest));
    }
    auto files = listed_files(s);
    if (files.empty()) {
        error::send("No symbol table is loaded.  Use the \"file\" command.");
    }
    nlohmann::json jobjfiles = nlohmann::json::array();
    for (const auto& [elf, path] : files) {
        std::string name = elf->debug_file_path() ? elf->debug_file_path()->string() : path;
        s.out().line(name + ":");
        dwarf::debug_info* dbg = elf->has_debug_info() ? elf->debug() : nullptr;
        if (dbg == nullptr) {
            s.out().line("(Objfile has no debug information.)");
            s.out().line("");
            jobjfiles.push_back({{"objfile", name}, {"sources", nlohmann::json::array()}});
            continue;
        }
        s.out().line("");
        std::string joined;
        nlohmann::json jsources = nlohmann::json::array();
        for (const auto& f : dbg->source_files_in_order()) {
            std::string shown = source_display_name(s, f);
            std::string tested = shown;
            if (basename) {
                tested = std::filesystem::path(shown).filename().string();
            } else if (dirname) {
                tested = std::filesystem::path(shown).parent_path().string();
            }
            if (re && !re->search(tested)) {
                continue;
            }
            joined += (joined.empty() ? "" : ", ") + shown;
            jsources.push_back(shown);
        }
        if (!joined.empty()) {   // gdb: nothing more for an objfile without a match
            s.out().line(joined);
            s.out().line("");
        }
        jobjfiles.push_back({{"objfile", name}, {"sources", std::move(jsources)}});
    }
    s.out().field("objfiles", std::move(jobjfiles));
}

}  // namespace

void register_symbol_commands(command_table& t) {
    command_table& info = t.prefix("info", {}, "Generic command for showing things about the program being debugged.");
    info.add(command{"functions", {}, "All function names or those matching REGEXP.",
                     "info functions [-q] [-n] [REGEXP]\nList the functions with debug information (by source file, "
                     "declaration line first), then the non-debugging symbols of the ELF symbol tables.\n"
                     "-q: no header line. -n: no non-debugging symbols.",
                     [](session& s, std::string_view a) { list_symbols(s, a, dwarf::symbol_listing::functions); },
                     false, nullptr});
    info.add(command{"variables", {}, "All global and static variable names or those matching REGEXP.",
                     "info variables [-q] [-n] [REGEXP]\nList the variables with static storage at file scope "
                     "(by source file), then the non-debugging data symbols.\n-q: no header line. -n: no "
                     "non-debugging symbols.",
                     [](session& s, std::string_view a) { list_symbols(s, a, dwarf::symbol_listing::variables); },
                     false, nullptr});
    info.add(command{"types", {}, "All type names, or those matching REGEXP.",
                     "info types [-q] [REGEXP]\nList the named types (structs, unions, enums, typedefs, base "
                     "types) by source file.\n-q: no header line.",
                     [](session& s, std::string_view a) { list_symbols(s, a, dwarf::symbol_listing::types); },
                     false, nullptr});
    info.add(command{"sources", {}, "All source files in the program or those matching REGEXP.",
                     "info sources [-basename | -dirname] [--] [REGEXP]\nPer objfile, the source files of its "
                     "debug information; REGEXP keeps the files whose name (or base name, or directory) matches.",
                     cmd_info_sources, false, nullptr});
}

}  // namespace ompdbg::app
