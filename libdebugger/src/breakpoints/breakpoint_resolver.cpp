// Breakpoint resolution (breakpoint_resolver.hpp): location specs to addresses in every
// module, and the sites planted to match the enabled locations.
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/text.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// The modules to search: the live process' modules, or the program alone (bias 0).
std::vector<tracer::loaded_module> search_modules(session& s) {
    if (auto* p = s.process(); p && p->is_alive()) {
        return p->modules();
    }
    std::vector<tracer::loaded_module> mods;
    if (s.program()) {
        mods.push_back(s.static_executable());
    }
    return mods;
}

/// Describes the file address `file_addr` of module `m` as a breakpoint location in
/// function `fn` (a `break FUNCTION` match), or ELF symbol `symbol_hint` (a match without
/// DWARF), or else the innermost function instance there (gdb's block_containing_function).
breakpoint_location describe(const tracer::loaded_module& m, std::uint64_t file_addr, const dwarf::function* fn,
                             const std::string& symbol_hint = {}) {
    breakpoint_location loc;
    loc.address = m.to_runtime(file_addr);
    loc.module_path = m.path.string();
    loc.file_address = file_addr;
    if (fn != nullptr) {
        loc.function = fn->name;
        loc.symbol = function_print_name(*fn);
    } else if (!symbol_hint.empty()) {
        loc.function = symbol_hint;
        loc.symbol = symbol_hint;
    }
    if (m.elf) {
        if (auto* dbg = m.elf->debug()) {
            if (loc.function.empty()) {
                auto chain = dbg->function_chain_at(file_addr);
                if (!chain.empty()) {
                    loc.function = chain.front().name;
                    loc.symbol = function_print_name(chain.front());
                }
            }
            if (auto le = dbg->line_at(file_addr)) {
                loc.file = le->file;
                loc.line = le->line;
            }
        }
        if (loc.function.empty() || loc.file.empty()) {
            auto sym = m.elf->symbol_at(file_addr);
            if (sym && loc.function.empty()) {
                loc.function = sym->name;
                loc.symbol = sym->name;
            }
            if (sym && loc.file.empty() && sym->name == loc.function && file_addr >= sym->value) {
                loc.symbol_offset = file_addr - sym->value;
            }
        }
    }
    return loc;
}

/// The line gdb reports for a FILE:LINE breakpoint at `file_addr`, set for line `used`
/// (the asked line, or the next one with code). gdb's skip_prologue_sal: when the address
/// is the end of a prologue that gdb skips (the row was moved there, or starts there) the
/// line is the one at that address, or the call line of the outermost inlined call that
/// starts there; otherwise the line the breakpoint was set for, not the last row at the
/// address (an inlined call starting there adds rows of its own).
int line_reported_for(const dwarf::debug_info& dbg, std::uint64_t file_addr, int used) {
    auto chain = dbg.function_chain_at(file_addr);
    // Units where gdb skips no prologue (gcc with location lists) keep the line.
    if (chain.empty() || chain.back().is_inlined || chain.back().breakpoint_pc != file_addr ||
        chain.back().breakpoint_pc == chain.back().entry_pc) {
        return used;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        if (it->is_inlined) {
            return it->call_line > 0 ? it->call_line : used;
        }
    }
    auto le = dbg.line_at(file_addr);
    return le && le->line > 0 ? le->line : used;
}

/// The file of the selected frame, or of main, for a bare `LINE` spec.
std::string default_source_file(session& s) {
    if (auto* p = s.process(); p && p->is_alive() && s.selected_tid()) {
        try {
            auto& frames = s.stack(s.selected_tid());
            auto level = static_cast<std::size_t>(std::max(0, s.selected_frame()));
            if (level < frames.size() && frames[level].line) {
                return frames[level].line->file;
            }
        } catch (const std::exception&) {
        }
    }
    for (auto& m : search_modules(s)) {
        if (!m.elf || !m.is_executable) {
            continue;
        }
        if (auto* dbg = m.elf->debug()) {
            auto mains = dbg->find_functions("main");
            if (!mains.empty()) {
                if (auto le = dbg->line_at(mains.front().entry_pc)) {
                    return le->file;
                }
                return mains.front().decl_file;
            }
        }
    }
    return {};
}

}  // namespace

std::string bind_line_spec(session& s, const std::string& spec) {
    auto p = parse_spec(spec);
    if (p.kind != spec_kind::line) {
        return spec;
    }
    std::string file = default_source_file(s);
    return file.empty() ? spec : fmt::format("{}:{}", file, p.line);
}

parsed_spec parse_spec(const std::string& raw) {
    std::string spec = trim_copy(raw);
    if (spec.empty()) {
        error::send("Argument required (location).");
    }
    parsed_spec p;
    if (spec[0] == '*') {
        p.kind = spec_kind::address;
        p.address_expr = trim_copy(spec.substr(1));
        return p;
    }
    if (all_digits(spec)) {
        p.kind = spec_kind::line;
        p.line = std::stoi(spec);
        return p;
    }
    // FILE:LINE, but not C++ scopes (ns::f).
    auto colon = spec.rfind(':');
    if (colon != std::string::npos && colon > 0 && spec[colon - 1] != ':' &&
        all_digits(std::string_view(spec).substr(colon + 1))) {
        p.kind = spec_kind::file_line;
        p.file = spec.substr(0, colon);
        p.line = std::stoi(spec.substr(colon + 1));
        return p;
    }
    p.kind = spec_kind::function;
    p.function = spec;
    return p;
}

std::vector<breakpoint_location> resolve_spec(session& s, const std::string& spec, std::string& why) {
    parsed_spec p = parse_spec(spec);
    std::vector<breakpoint_location> locs;
    auto modules = search_modules(s);
    if (modules.empty()) {
        why = "No symbol table is loaded.  Use the \"file\" command.";
        return locs;
    }
    auto add_unique = [&](breakpoint_location loc) {
        for (auto& l : locs) {
            if (l.address == loc.address) {
                return;
            }
        }
        locs.push_back(std::move(loc));
    };

    switch (p.kind) {
    case spec_kind::address: {
        std::uint64_t addr = 0;
        try {
            std::size_t used = 0;
            addr = std::stoull(p.address_expr, &used, 0);
            if (used != p.address_expr.size()) {
                throw std::invalid_argument("expr");
            }
        } catch (const std::logic_error&) {
            auto ctx = frame_context::for_selection(s);
            addr = static_cast<std::uint64_t>(dwarf::as_integer(dwarf::evaluate(p.address_expr, ctx)));
        }
        const tracer::loaded_module* owner = nullptr;
        for (auto& m : modules) {
            if (!m.elf) {
                continue;
            }
            auto [lo, hi] = m.elf->load_range();
            if (addr >= lo + m.load_bias && addr < hi + m.load_bias) {
                owner = &m;
                break;
            }
        }
        if (owner) {
            add_unique(describe(*owner, addr - owner->load_bias, nullptr));
        } else {
            breakpoint_location loc;
            loc.address = virt_addr(addr);
            loc.file_address = addr;
            locs.push_back(loc);
        }
        break;
    }
    case spec_kind::line:
    case spec_kind::file_line: {
        std::string file = p.kind == spec_kind::line ? default_source_file(s) : p.file;
        if (file.empty()) {
            why = "No symbol table is loaded.  Use the \"file\" command.";
            return locs;
        }
        bool file_known = false;
        for (auto& m : modules) {
            if (!m.elf) {
                continue;
            }
            auto* dbg = m.elf->debug();
            if (!dbg) {
                continue;
            }
            try {
                auto [addrs, actual] = dbg->addresses_for_line(file, p.line);
                if (!addrs.empty() || actual > 0) {
                    file_known = true;
                }
                for (auto a : addrs) {
                    breakpoint_location loc = describe(m, a, nullptr);
                    if (int shown = line_reported_for(*dbg, a, actual); shown > 0) {
                        loc.line = shown;
                    }
                    // The file of the row that matched, not of an inlined function of another
                    // file (a header's std::vector::operator[]) starting at the same address.
                    if (auto row = dbg->row_of_line_at(a, file, loc.line)) {
                        loc.file = row->file;
                    }
                    add_unique(std::move(loc));
                }
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "addresses_for_line: {}", e.what());
            }
            if (!file_known) {
                for (auto& f : dbg->source_files()) {
                    std::string_view fv(f);
                    if (fv == file || (fv.size() > file.size() && fv.ends_with(file) &&
                                       fv[fv.size() - file.size() - 1] == '/')) {
                        file_known = true;
                        break;
                    }
                }
            }
        }
        if (locs.empty()) {
            std::string base = std::filesystem::path(file).filename().string();
            why = file_known ? fmt::format("No line {} in file \"{}\".", p.line, p.kind == spec_kind::line ? base : file)
                             : fmt::format("No source file named {}.", file);
        }
        break;
    }
    case spec_kind::function: {
        for (auto& m : modules) {
            if (!m.elf) {
                continue;
            }
            bool found_here = false;
            // A library whose cached unit table lacks the name keeps its DWARF closed (libc's
            // at every solib event of a pending or re-resolved `break f`).
            auto* dbg = m.elf->may_define_function(p.function) ? m.elf->debug() : nullptr;
            if (dbg != nullptr) {
                for (auto& fn : dbg->find_functions(p.function)) {
                    std::uint64_t a = fn.breakpoint_pc ? fn.breakpoint_pc : fn.entry_pc;   // inlined: its first range, as gdb
                    add_unique(describe(m, a, &fn));
                    found_here = true;
                }
            }
            if (!found_here) {
                for (auto& sym : m.elf->find_symbols(p.function)) {
                    if (sym.kind != dwarf::symbol_kind::function && sym.kind != dwarf::symbol_kind::ifunc) {
                        continue;
                    }
                    if (sym.value == 0) {
                        continue;   // undefined (imported) symbol
                    }
                    // Without lines gdb skips the frame set-up (amd64_skip_prologue); an
                    // ifunc's resolver is left as it is.
                    std::uint64_t a = sym.value;
                    if (sym.kind == dwarf::symbol_kind::function) {
                        a = m.elf->frame_setup_end(sym.value).value_or(sym.value);
                    }
                    add_unique(describe(m, a, nullptr, sym.name));
                }
            }
        }
        if (locs.empty()) {
            why = fmt::format("Function \"{}\" not defined.", p.function);
        }
        break;
    }
    }
    return locs;
}

void sync_breakpoint_sites(session& s) {
    auto* proc = s.process();
    if (!proc || !proc->is_alive()) {
        s.planted_sites().clear();
        return;
    }
    std::set<std::uint64_t> wanted;
    int rank = s.current_inferior().rank;
    for (auto& [n, bp] : s.breakpoints()) {
        if (!bp.enabled || !bp.applies_to_rank(rank)) {
            continue;
        }
        for (auto& loc : bp.locations) {
            if (loc.enabled) {
                wanted.insert(loc.address.addr());
            }
        }
    }
    auto& planted = s.planted_sites();
    for (auto it = planted.begin(); it != planted.end();) {
        if (!wanted.count(*it)) {
            try {
                proc->remove_breakpoint_site(virt_addr(*it));
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "remove site: {}", e.what());
            }
            it = planted.erase(it);
        } else {
            ++it;
        }
    }
    std::vector<std::string> failures;
    for (auto a : wanted) {
        if (planted.count(a)) {
            continue;
        }
        try {
            proc->add_breakpoint_site(virt_addr(a));
            planted.insert(a);
        } catch (const std::exception& e) {
            failures.push_back(e.what());
        }
    }
    sync_fast_sites(s);   // jump pads for conditions the agent evaluates (issue 21)
    if (!failures.empty()) {
        error::send(failures.front());
    }
}

void refresh_breakpoints(session& s, bool report_resolved) {
    for (auto& [n, bp] : s.breakpoints()) {
        if (bp.spec.empty()) {
            continue;
        }
        std::string why;
        std::vector<breakpoint_location> locs;
        try {
            locs = resolve_spec(s, bp.spec, why);
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "re-resolving {}: {}", bp.spec, e.what());
            continue;
        }
        if (locs.empty()) {
            // Keep locations found earlier in a module still mapped? A fresh process may not
            // have loaded that library yet: the breakpoint becomes pending again.
            if (!bp.locations.empty() && !bp.pending) {
                bp.locations.clear();
                bp.pending = true;
            }
            continue;
        }
        // Keep the enabled flags of locations that survive.
        for (auto& l : locs) {
            for (auto& old : bp.locations) {
                if (old.module_path == l.module_path && old.file_address == l.file_address) {
                    l.enabled = old.enabled;
                }
            }
        }
        bool was_pending = bp.pending;
        bp.locations = std::move(locs);
        bp.pending = false;
        if (was_pending && report_resolved) {
            (void)0;   // gdb resolves silently
        }
    }
    sync_breakpoint_sites(s);
}

std::vector<std::pair<breakpoint*, std::size_t>> breakpoints_at(session& s, std::uint64_t addr) {
    std::vector<std::pair<breakpoint*, std::size_t>> out;
    int rank = s.current_inferior().rank;
    for (auto& [n, bp] : s.breakpoints()) {
        if (!bp.enabled || !bp.applies_to_rank(rank)) {
            continue;
        }
        for (std::size_t i = 0; i < bp.locations.size(); ++i) {
            if (bp.locations[i].enabled && bp.locations[i].address.addr() == addr) {
                out.emplace_back(&bp, i);
                break;
            }
        }
    }
    return out;
}

}  // namespace ompdbg::debugger
