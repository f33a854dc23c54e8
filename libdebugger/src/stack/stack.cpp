#include "ompdbg/debugger/stack/stack.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/frame_args.hpp"
#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

namespace {

/// The session's hidden inline copies per thread (see inline_frames.hpp), kept in its
/// model_state until a resume forgets them.
struct hidden_inline_copies {
    std::map<pid_t, int> by_thread;
};

/// A function called from the debugger and abandoned in a stop returns to the program's
/// entry point: the frame there is gdb's dummy frame, and the stack goes on from the
/// registers the thread had before the call (the frames of nested calls likewise).
/// Returns which of `frames` are dummy frames.
std::vector<bool> splice_called_functions(session& s, tracer::target& tgt, pid_t tid,
                                          std::vector<tracer::frame>& frames, std::size_t max_frames) {
    std::vector<bool> dummy(frames.size(), false);
    for (std::size_t i = 1; i < frames.size() && i < max_frames; ++i) {
        auto caller = infcall::abandoned_caller(s, tid, frames[i].pc.addr(), frames[i].sp.addr());
        if (!caller) {
            continue;
        }
        frames.resize(i + 1);
        dummy.resize(i + 1);
        dummy[i] = true;
        std::vector<tracer::frame> more = tracer::backtrace_from(tgt, tid, *caller, max_frames - i - 1);
        frames.insert(frames.end(), more.begin(), more.end());
        dummy.resize(frames.size(), false);
    }
    return dummy;
}

}  // namespace

int hidden_inline_frames(session& s, pid_t tid) {
    const hidden_inline_copies* hidden = s.model_state().find<hidden_inline_copies>();
    if (hidden == nullptr) {
        return 0;
    }
    auto t = hidden->by_thread.find(tid);
    return t == hidden->by_thread.end() ? 0 : t->second;
}

void set_hidden_inline_frames(session& s, pid_t tid, int n) {
    if (n > 0) {
        s.model_state().get<hidden_inline_copies>().by_thread[tid] = n;
    } else if (auto* hidden = s.model_state().find<hidden_inline_copies>()) {
        hidden->by_thread.erase(tid);
    }
    s.current_inferior().stacks.erase(tid);
}

void forget_hidden_inline_frames(session& s) {
    if (auto* hidden = s.model_state().find<hidden_inline_copies>()) {
        hidden->by_thread.clear();
    }
}

int inline_entries_at(const std::vector<dwarf::function>& chain, std::uint64_t file_pc) {
    int n = 0;
    for (const dwarf::function& f : chain) {
        if (!f.is_inlined || !(f.entry_pc == file_pc || (file_pc > 0 && !f.contains(file_pc - 1)))) {
            break;
        }
        ++n;
    }
    // The outermost function of a physical frame is never hidden.
    return std::min(n, static_cast<int>(chain.size()) - 1);
}

std::vector<stack_frame> build_stack(session& s, pid_t tid, std::size_t max_frames) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("No stack.");
    }
    std::vector<stack_frame> out;
    std::vector<tracer::frame> frames = tracer::backtrace(*tgt, tid, max_frames);
    std::vector<bool> dummy = splice_called_functions(s, *tgt, tid, frames, max_frames);
    for (std::size_t i = 0; i < frames.size() && out.size() < max_frames; ++i) {
        const tracer::frame& fr = frames[i];
        if (dummy[i]) {
            stack_frame f;
            f.tid = tid;
            f.level = static_cast<int>(out.size());
            f.physical_index = i;
            f.physical = fr;
            f.is_dummy = true;
            out.push_back(std::move(f));
            continue;
        }
        const tracer::loaded_module* mod = tgt->module_at(fr.lookup_pc());
        dwarf::debug_info* dbg = (mod != nullptr && mod->elf) ? mod->elf->debug() : nullptr;
        const std::uint64_t faddr = mod != nullptr ? mod->to_file(fr.lookup_pc()) : 0;

        std::vector<dwarf::function> chain;
        std::optional<dwarf::line_entry> line;
        if (dbg != nullptr) {
            try {
                chain = dbg->function_chain_at(faddr);
                line = dbg->line_at(faddr);
            } catch (const ompdbg::error&) {
                // Malformed DWARF in one module must not hide the rest of the stack.
                chain.clear();
                line.reset();
            }
        }

        stack_frame base;
        base.tid = tid;
        base.physical_index = i;
        base.physical = fr;
        base.module = mod;
        if (chain.empty()) {
            stack_frame f = base;
            f.level = static_cast<int>(out.size());
            f.line = line;
            if (mod != nullptr && mod->elf) {
                auto sym = mod->elf->symbol_at(faddr);
                if (!sym) {
                    sym = mod->elf->plt_symbol_at(faddr);   // "puts@plt ()", as gdb
                }
                if (sym) {
                    f.symbol_name = demangle(sym->name);
                    f.symbol_offset = faddr - sym->value;
                }
            }
            // past-main off without DWARF too: gdb finds main by the program's symbol.
            bool is_main = mod != nullptr && mod->is_executable && f.symbol_name == "main";
            out.push_back(std::move(f));
            if (is_main) {
                break;
            }
            continue;
        }
        bool reached_main = false;
        // Frame 0 leaves out the inlined copies a step has not entered yet.
        std::size_t first = 0;
        if (i == 0) {
            first = std::min<std::size_t>(static_cast<std::size_t>(hidden_inline_frames(s, tid)), chain.size() - 1);
        }
        for (std::size_t k = first; k < chain.size() && out.size() < max_frames; ++k) {
            stack_frame f = base;
            f.level = static_cast<int>(out.size());
            f.function = chain[k];
            f.is_inlined = chain[k].is_inlined;
            f.inline_depth = k;
            if (k == 0) {
                f.line = line;
            } else {
                // The caller of an inlined copy is "at" the call site of that copy.
                dwarf::line_entry call;
                call.addr = mod != nullptr ? mod->to_file(fr.pc) : fr.pc.addr();   // a file address
                call.file = chain[k - 1].call_file;
                call.line = chain[k - 1].call_line;
                f.line = call;
            }
            if (k + 1 == chain.size() && chain[k].name == "main") {
                reached_main = true;
            }
            out.push_back(std::move(f));
        }
        // gdb's default `backtrace past-main off`: the stack ends at main.
        if (reached_main) {
            break;
        }
    }
    return out;
}

std::string frame_function_name(const stack_frame& f) {
    if (f.function) {
        // A C function with an assembler name (glibc's `exit` is `__GI_exit`): gdb shows
        // that name. C++ linkage names are mangled ("_Z...") and keep the source name.
        const std::string& linkage = f.function->linkage_name;
        if (!linkage.empty() && !linkage.starts_with("_Z") && linkage != f.function->name) {
            return linkage;
        }
        return f.function->name;
    }
    if (!f.symbol_name.empty()) {
        return f.symbol_name;
    }
    return "??";
}

bool frame_shows_pc(const stack_frame& f) {
    // Only the innermost virtual frame of a physical frame shows its pc (gdb: the callers
    // of an inlined frame are "at" the call site whose pc is the frame's pc).
    if (f.inline_depth > 0) {
        return false;
    }
    if (f.physical.is_caller_frame) {
        return true;
    }
    if (!f.line || f.line->line == 0) {
        return true;
    }
    return !pc_starts_statement(f);
}

bool pc_starts_statement(const stack_frame& f) {
    if (!f.line || f.line->line == 0) {
        return false;
    }
    // gdb's frame_show_address: mid-statement unless the pc is the address of its row and
    // that row is a statement (clang's non-statement rows of a line after a call count as
    // mid-statement). The row is the one gdb's line table holds for the pc: gdb does not
    // record a row that repeats its line once the line has had a discriminator, so libc's
    // `write` stopped at its syscall (a repeated row of line 26 there) is mid-statement.
    // line->addr is a file address of the frame's module.
    const std::uint64_t bias = f.module != nullptr ? f.module->load_bias : 0;
    if (f.module != nullptr && f.module->elf && f.inline_depth == 0) {
        if (const dwarf::debug_info* dbg = f.module->elf->debug()) {
            try {
                if (auto span = dbg->gdb_line_span(f.pc() - bias)) {
                    return span->row.addr + bias == f.pc() && span->row.is_stmt;
                }
            } catch (const ompdbg::error&) {
                // malformed line table: judge by the frame's own row below
            }
        }
    }
    return f.line->addr + bias == f.pc() && f.line->is_stmt;
}

std::string source_display_name(const tracer::loaded_module* m, const std::string& path) {
    if (m != nullptr && m->elf) {
        if (auto* dbg = m->elf->debug()) {
            return dbg->display_name(path);
        }
    }
    return path;
}

std::string source_display_name(session& s, const std::string& path) {
    auto name_in = [&](const dwarf::elf_file* elf) -> std::optional<std::string> {
        auto* dbg = elf != nullptr ? elf->debug() : nullptr;
        if (dbg == nullptr) {
            return std::nullopt;
        }
        std::string name = dbg->display_name(path);
        return name != path ? std::optional<std::string>(name) : std::nullopt;
    };
    try {
        if (tracer::target* t = s.target()) {
            for (const tracer::loaded_module& m : t->modules()) {
                if (auto n = name_in(m.elf.get())) {
                    return *n;
                }
            }
        } else if (s.program()) {
            if (auto n = name_in(s.elf_for(*s.program()).get())) {
                return *n;
            }
        }
    } catch (const ompdbg::error&) {
    }
    return path;
}

const dwarf::variable& value_source(const dwarf::variable& param, const std::vector<dwarf::variable>& locals) {
    for (const dwarf::variable& l : locals) {
        if (l.name == param.name) {
            return l;
        }
    }
    return param;
}

namespace {

/// The value a scalar argument had on entry to the frame's function (gdb's `n@entry`),
/// known from the caller's call site; nullopt when the DWARF does not say.
std::optional<dwarf::value> entry_value_of(const dwarf::variable& arg, const dwarf::type& t, const stack_frame& f,
                                           const frame_context& ctx) {
    if (!f.function || f.module == nullptr || t.is_aggregate() || t.size() == 0 || t.size() > 8 ||
        (t.kind() == dwarf::type_kind::base && t.encoding() == dwarf::base_encoding::floating)) {
        return std::nullopt;
    }
    auto v = dwarf::parameter_entry_value(arg, f.function->entry_pc + f.module->load_bias, ctx);
    if (!v) {
        return std::nullopt;
    }
    dwarf::value out;
    out.val_type = arg.var_type;
    out.bytes.resize(t.size());
    std::memcpy(out.bytes.data(), &*v, t.size());
    return out;
}

}  // namespace

std::string format_frame_args(session& s, const stack_frame& f) {
    if (!f.function) {
        return {};
    }
    std::string out;
    try {
        // The frame's own thread: `info threads` and `thread apply` format other threads' frames.
        frame_context ctx(s, f.tid != 0 ? f.tid : s.selected_tid(), f);
        std::vector<dwarf::variable> locals = ctx.frame_variables(false);
        for (const dwarf::variable& v : ctx.frame_variables(true)) {
            if (!out.empty()) {
                out += ", ";
            }
            out += v.name;
            out += '=';
            try {
                const dwarf::variable& src = value_source(v, locals);
                dwarf::value val = ctx.read_variable(src);
                dwarf::type t = src.var_type.strip_cv_typedef();
                if ((t.kind() == dwarf::type_kind::reference ||
                     t.kind() == dwarf::type_kind::rvalue_reference) && t.target()) {
                    t = t.target()->strip_cv_typedef();
                }
                // gdb's default `print frame-arguments scalars`: aggregates show as "...",
                // optimized out or not (gdb's value_check_printable in summary mode).
                dwarf::format_options opts = s.settings().print;
                opts.top_level = false;   // gdb: "argv=0x7ffe..." without "(char **)"
                opts.pretty = false;      // frame lines stay one line
                if (t.is_aggregate()) {
                    out += "...";
                } else if (auto entry = entry_value_of(src, t, f, ctx)) {
                    // gdb's `print entry-values default`: "n=n@entry=5" when the value
                    // is still the one passed, else "n=6, n@entry=5".
                    if (!val.optimized_out && val.bytes == entry->bytes) {
                        out += fmt::format("{}@entry={}", v.name, dwarf::format_value(*entry, ctx, opts));
                    } else {
                        out += fmt::format("{}, {}@entry={}", dwarf::format_value(val, ctx, opts), v.name,
                                           dwarf::format_value(*entry, ctx, opts));
                    }
                } else {
                    out += dwarf::format_value(val, ctx, opts);
                }
            } catch (const ompdbg::error& e) {
                out += fmt::format("<error: {}>", e.what());
            }
        }
    } catch (const ompdbg::error&) {
    }
    return out;
}

}  // namespace ompdbg::debugger
