// info sharedlibrary / info symbol ADDR / info address SYM: where the program's modules,
// symbols and variables are.

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app {

void cmd_info_sharedlibrary(session& s, std::string_view) {
    tracer::target* tgt = s.target();
    std::vector<const tracer::loaded_module*> libs;
    if (tgt != nullptr) {
        for (const tracer::loaded_module& m : tgt->modules()) {
            if (!m.is_executable) {
                libs.push_back(&m);
            }
        }
    }
    if (libs.empty()) {
        s.out().line("No shared libraries loaded at this time.");
        return;
    }
    s.out().line("From                To                  Syms Read   Shared Object Library");
    bool any_without_debug = false;
    for (const tracer::loaded_module* m : libs) {
        std::string from = "", to = "";
        bool debug = false;
        if (m->elf) {
            if (auto text = m->elf->section(".text")) {
                from = fmt::format("0x{:016x}", text->addr + m->load_bias);
                to = fmt::format("0x{:016x}", text->addr + text->size + m->load_bias);
            }
            debug = m->elf->has_debug_info();
        }
        std::string syms = m->elf ? (debug ? "Yes" : "Yes (*)") : "No";
        any_without_debug = any_without_debug || (m->elf && !debug);
        s.out().line(fmt::format("{:<20}{:<20}{:<12}{}", from, to, syms, m->path.string()));
    }
    if (any_without_debug) {
        s.out().line("(*): Shared library is missing debugging information.");
    }
}

void cmd_info_symbol(session& s, std::string_view args) {
    if (trim(args).empty()) {
        error::send("Argument required (address).");
    }
    frame_context ctx = frame_context::for_selection(s);
    std::uint64_t addr = value_as_address(dwarf::evaluate(trim(args), ctx));
    auto sym = symbolize_address(s, addr);
    if (!sym) {
        s.out().line(fmt::format("No symbol matches {}.", trim(args)));
        return;
    }
    std::string name = demangle(sym->name);
    std::string text = sym->offset == 0 ? name : fmt::format("{} + {}", name, sym->offset);
    text += fmt::format(" in section {}", sym->section);
    // gdb names the file once it has several: the process's modules, or after a run the
    // program and the libraries it had.
    if (sym->module != nullptr && s.target() != nullptr && s.target()->modules().size() > 1) {
        text += fmt::format(" of {}", sym->module->path.string());
    } else if (s.target() == nullptr && s.program() && s.program_ran()) {
        text += fmt::format(" of {}", s.program()->string());
    }
    s.out().line(text);
}

void cmd_info_address(session& s, std::string_view args) {
    std::string_view name = trim(args);
    if (name.empty()) {
        error::send("Argument required.");
    }
    frame_context ctx = frame_context::for_selection(s);
    if (ctx.has_frame()) {
        for (const bool params : {true, false}) {
            for (const dwarf::variable& v : ctx.frame_variables(params)) {
                if (v.name == name) {
                    s.out().line(fmt::format("Symbol \"{}\" is a variable in the frame of its function.", name));
                    return;
                }
            }
        }
    }
    if (auto fn = ctx.lookup_function(name); fn && fn->address) {
        s.out().line(fmt::format("Symbol \"{}\" is a function at address 0x{:x}.", name, *fn->address));
        return;
    }
    if (auto v = ctx.lookup_variable(name); v && v->address) {
        s.out().line(fmt::format("Symbol \"{}\" is static storage at address 0x{:x}.", name, *v->address));
        return;
    }
    error::send(fmt::format("No symbol \"{}\" in current context.", name));
}

}  // namespace ompdbg::app
