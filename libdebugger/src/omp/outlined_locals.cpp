// `info locals` in an outlined OpenMP region (issue 5; from the CLI, issue 19): the user's
// variables by their source names, labelled with their data-sharing (private, shared,
// firstprivate, reduction...) from the DMPL library's demangling, the DWARF locations and the
// routine's code (outlined_code).

#include "ompdbg/debugger/omp/outlined_locals.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/omp/outlined_code.hpp"
#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"

namespace ompdbg::debugger {

namespace {

/// The names a routine's copies can stand for, wherever they are in it (an inner block's
/// copy hides them from the pc's scope): its parameters, and its variables reached through
/// a pointer (gcc's shared variables in .omp_data_i).
std::set<std::string> copied_names(Dwarf_Die routine) {
    std::set<std::string> out;
    std::vector<Dwarf_Die> todo{routine};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        Dwarf_Die child;
        if (dwarf_child(&die, &child) != 0) {
            continue;
        }
        do {
            int tag = dwarf_tag(&child);
            const char* name = dwarf_diename(&child);
            if (tag == DW_TAG_lexical_block) {
                todo.push_back(child);
            } else if (name != nullptr && (tag == DW_TAG_formal_parameter ||
                                           (tag == DW_TAG_variable && [&] {
                                               dwarf::variable v;
                                               v.die = child;
                                               return facts_of(v).deref;
                                           }()))) {
                out.insert(name);
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    return out;
}

/// What the outlined routine of frame `f` does with each of `locals` (outlined_code.hpp):
/// its -O0 frame slots, read from the frame's %rbp, and its code from the module's file.
/// All false where the frame, the code or a slot cannot be read.
std::vector<slot_facts> code_facts(session& s, const fold_context& fc, frame_context& ctx, const stack_frame& f,
                                   const std::vector<dwarf::variable>& locals) {
    std::vector<slot_facts> none(locals.size());
    if (!f.module || !f.module->elf || !f.function || f.function->ranges.empty() || f.is_inlined) {
        return none;
    }
    std::uint64_t rbp = 0;
    try {
        rbp = ctx.frame_registers().fp();
    } catch (const std::exception&) {
        return none;   // the thread is gone: no slots to read
    }
    std::vector<frame_slot> slots;
    for (const auto& v : locals) {
        frame_slot slot{std::numeric_limits<std::int64_t>::min() / 2, 0};
        try {
            dwarf::value val = ctx.read_variable(v);
            if (val.address && !facts_of(v).deref) {
                auto off = static_cast<std::int64_t>(*val.address - rbp);
                if (off > -(1 << 20) && off < (1 << 12)) {
                    slot = {off, val.bytes.size()};
                }
            }
        } catch (const std::exception&) {
            // no slot: nothing found for it
        }
        slots.push_back(slot);
    }
    auto [lo, hi] = f.function->ranges.front();
    if (hi <= lo || hi - lo > (1u << 20)) {
        return none;
    }
    std::vector<std::byte> bytes = f.module->elf->read_bytes(lo, hi - lo);
    dwarf::debug_info* di = f.module->elf->debug();
    // The construct's code is on the lines of the routine's first and last instructions
    // (gcc: the pragma's line for both; clang: the region's braces).
    std::set<int> construct_lines;
    for (std::uint64_t at : {lo, hi - 1}) {
        if (auto l = di != nullptr ? di->line_at(at) : std::nullopt; l && l->line != 0) {
            construct_lines.insert(l->line);
        }
    }
    outlined_code code;
    code.bytes = bytes;
    code.address = f.module->to_runtime(lo).addr();
    tracer::target& tgt = *s.target();
    code.callee_name = [&tgt](std::uint64_t return_address) { return called_function(tgt, return_address); };
    const tracer::loaded_module* m = f.module;
    code.on_construct_line = [di, m, &construct_lines](std::uint64_t addr) {
        auto l = di != nullptr ? di->line_at(m->to_file(virt_addr(addr))) : std::nullopt;
        return l && construct_lines.count(l->line) != 0;
    };
    code.reduction_routines = fc.lib->reduction_routines(DMPL_lang_c);
    return analyse_outlined_code(code, slots);
}

}  // namespace

location_facts facts_of(const dwarf::variable& v) {
    location_facts f;
    Dwarf_Die die = v.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr) {
        return f;
    }
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_getlocation(&attr, &ops, &n) != 0) {
        return f;  // a location list: not a global, never TLS in practice
    }
    f.single = true;
    for (std::size_t i = 0; i < n; ++i) {
        if (ops[i].atom == DW_OP_form_tls_address || ops[i].atom == DW_OP_GNU_push_tls_address) {
            f.tls = true;
        }
        if (ops[i].atom == DW_OP_deref) {
            f.deref = true;
        }
    }
    return f;
}

std::optional<std::vector<outlined_local>> outlined_region_locals(session& s) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return std::nullopt;
    }
    const auto& st = s.stack(s.selected_tid());
    if (st.empty()) {
        return std::nullopt;
    }
    const stack_frame& f = st[static_cast<std::size_t>(s.selected_frame())];
    // A function inlined into the routine has its own variables, which no clause scopes:
    // gdb's `info locals` shows them (its pc's symbol is the routine's all the same).
    if (!f.function || f.is_inlined) {
        return std::nullopt;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return std::nullopt;
    }
    std::string routine = frame_symbol(f);
    if (fc->lib->demangle(routine).rc != DMPL_ok) {
        return std::nullopt;
    }
    frame_context ctx(s, s.selected_tid(), f);
    std::vector<dwarf::variable> params = ctx.frame_variables(true);
    std::vector<dwarf::variable> locals = ctx.frame_variables(false);
    std::set<std::string> local_names;
    for (const auto& v : locals) {
        local_names.insert(v.name);
    }
    const std::set<std::string> originals = copied_names(f.function->die);
    std::vector<slot_facts> code = code_facts(s, *fc, ctx, f, locals);
    // Optimised code (gcc -O2) keeps the routine's copies and .omp_data_i in registers,
    // described by location lists: nothing tells a shared variable from a private copy
    // there, so no label is better than a wrong one (the values print as gdb's).
    bool evidence = false;
    for (const auto* vars : {&locals, &params}) {
        for (const auto& v : *vars) {
            evidence = evidence || facts_of(v).single;
        }
    }
    std::vector<outlined_local> out;
    auto show = [&](const dwarf::variable& v, bool is_param, const slot_facts& sf) {
        int hints = 0;
        location_facts lf = facts_of(v);
        auto kind = v.var_type.strip_cv_typedef().kind();
        if (is_param) {
            hints |= DMPL_hint_parameter;
            if (local_names.count(v.name)) {
                hints |= DMPL_hint_has_copy;
            }
        } else if (!lf.deref && originals.count(v.name)) {
            hints |= DMPL_hint_copy;
        }
        hints |= (sf.reduction ? DMPL_hint_reduction_code : 0) | (sf.copied_in ? DMPL_hint_copied_in : 0) |
                 (sf.copied_out ? DMPL_hint_copied_out : 0);
        if (lf.deref || kind == dwarf::type_kind::reference || kind == dwarf::type_kind::rvalue_reference ||
            (is_param && kind == dwarf::type_kind::pointer)) {
            hints |= DMPL_hint_by_reference;
        }
        auto d = fc->lib->demangle(routine + "::" + v.name, hints);
        if (d.rc == DMPL_name_internal) {
            return;
        }
        std::string name = d.rc == DMPL_ok ? d.name : v.name;
        std::string scope = evidence ? plugins::dmpl_varinfo_name(d.varinfo) : std::string();
        std::string value;
        try {
            dwarf::value val = ctx.read_variable(v);
            // clang passes shared variables as C++ references: show the user's variable.
            auto referenced_type = v.var_type.strip_cv_typedef().target();
            if ((kind == dwarf::type_kind::reference || kind == dwarf::type_kind::rvalue_reference) &&
                referenced_type && val.bytes.size() == 8) {
                std::uint64_t target = 0;
                std::memcpy(&target, val.bytes.data(), 8);
                dwarf::value referenced;
                referenced.val_type = *referenced_type;
                referenced.address = target;
                val = referenced;
            }
            value = dwarf::format_value(val, ctx);
        } catch (const std::exception& e) {
            value = std::string("<error: ") + e.what() + ">";
        }
        out.push_back({name, value, scope});
    };
    for (std::size_t i = 0; i < locals.size(); ++i) {
        show(locals[i], false, code[i]);
    }
    for (const auto& v : params) {
        show(v, true, slot_facts{});
    }
    return out;
}

}  // namespace ompdbg::debugger
