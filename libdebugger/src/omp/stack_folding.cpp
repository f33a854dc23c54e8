// `bt` of a thread in an OpenMP region with the runtime's frames folded into one line
// (`[omp parallel in main at fig8.c:21, thread 2 of 4]`), through the DMPL library's names
// of the runtime's dispatcher and outlined routines; `omp bt continued` follows a team
// member into the thread that encountered the region.

#include "commands_dmpl_shared.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "omp_stack_view.hpp"
#include "session.hpp"
#include "frame_line.hpp"

namespace ompdbg::app::dmpl_impl {

namespace fs = std::filesystem;

namespace {

bool is_dispatcher(const fold_context& fc, const stack_frame& f) {
    return in_runtime(fc, f) && frame_symbol(f) == fc.dispatcher;
}

/// "[omp parallel in main at fig8.c:21, thread 2 of 4]".
/// The label of a region `levels_out` regions outward of the innermost one `tid` runs in:
/// the thread's number and team size in that region where the runtime can tell.
std::string region_line(fold_context& fc, pid_t tid, const std::string& parent, const std::string& where,
                        int levels_out) {
    std::string l = "[omp parallel in " + parent;
    if (!where.empty()) {
        l += " at " + where;
    }
    if (auto pos = omp_position(*fc.s, tid, levels_out)) {
        l += fmt::format(", thread {} of {}", pos->first, pos->second);
    }
    return l + "]";
}

/// How many regions `frames[0..end)` entered through the runtime's dispatcher: the labels
/// of a thread's stack count outward from its innermost region by these.
int dispatched_regions(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t end) {
    int n = 0;
    for (std::size_t k = 0; k < end && k < frames.size(); ++k) {
        n += is_dispatcher(fc, frames[k]) ? 1 : 0;
    }
    return n;
}

/// Where a team member's region was encountered: the thread and the index of its first
/// frame outward of the runtime's call of the region.
struct encounter {
    pid_t tid = 0;
    std::size_t frame = 0;
};

/// The thread that encountered the region `outlined` (the mangled routine a team member
/// runs, of the user's function `parent`), or nullopt.
std::optional<encounter> find_encounter(fold_context& fc, pid_t tid, const std::string& outlined,
                                        const std::string& parent) {
    session& s = *fc.s;
    tracer::target* tgt = s.target();
    // The thread that called the dispatcher for the same outlined routine.
    for (tracer::thread* th : tgt->threads()) {
        if (th->tid() == tid || th->state() == tracer::thread_state::exited) {
            continue;
        }
        if (auto k = encountering_frame(fc, s.stack(th->tid()), outlined)) {
            return encounter{th->tid(), *k};
        }
    }
    // The encountering thread may have finished its share already and wait in the
    // dispatcher (joining the team): its frames outward of the dispatcher call from the
    // user's function are the parent task's.
    std::string wanted = parent.substr(0, parent.find('('));
    for (tracer::thread* th : tgt->threads()) {
        if (th->tid() == tid || th->state() == tracer::thread_state::exited) {
            continue;
        }
        const auto& other = s.stack(th->tid());
        for (std::size_t k = 0; k < other.size(); ++k) {
            // The dispatcher itself may be gone from the stack (libgomp's GOMP_parallel
            // tail-calls GOMP_parallel_end): any runtime frames called by `wanted`,
            // in a thread that is not running an outlined routine itself.
            if (outlined_parent(fc, other[k])) {
                break;
            }
            if (!in_runtime(fc, other[k])) {
                continue;
            }
            std::size_t q = k + 1;
            while (q < other.size() && in_runtime(fc, other[q])) {
                ++q;
            }
            if (q < other.size() && frame_function_name(other[q]) == wanted) {
                return encounter{th->tid(), q};
            }
            break;
        }
    }
    return std::nullopt;
}

/// Prints frames[from..] of `tid` with runtime frames folded into a region line. Every
/// frame keeps its own number in `tid`'s stack, the one `frame N` selects there. A team
/// member's stack ends at its region line; with `continued`, the frames of the thread that
/// encountered the region follow a separator naming that thread, numbered as in its stack.
void print_folded(fold_context& fc, pid_t tid, const std::vector<stack_frame>& frames, std::size_t from,
                  bool continued, nlohmann::json& rows, int depth) {
    session& s = *fc.s;
    for (std::size_t i = from; i < frames.size(); ++i) {
        const stack_frame& f = frames[i];
        std::string text = format_frame_line(s, f, true);
        s.out().line(text);
        nlohmann::json row = frame_json(f);
        row["lwp"] = tid;
        rows.push_back(std::move(row));
        auto parent = outlined_parent(fc, f);
        if (!parent) {
            continue;
        }
        // Fold the outlined wrappers and the runtime's frames above this routine.
        std::size_t j = i + 1;
        bool saw_dispatcher = false;
        std::size_t outermost = i;
        // The routine's wrappers and the runtime up to the frame that encountered the
        // construct: after the dispatcher, the first frame outside the runtime is that
        // frame, even when it is an enclosing region's outlined routine (nested regions).
        while (j < frames.size()) {
            bool runtime = in_runtime(fc, frames[j]);
            if (!runtime && (saw_dispatcher || !outlined_parent(fc, frames[j]))) {
                break;
            }
            saw_dispatcher = saw_dispatcher || is_dispatcher(fc, frames[j]);
            if (!runtime) {
                outermost = j;
            }
            ++j;
        }
        const int levels_out = dispatched_regions(fc, frames, i);
        const std::string construct = construct_where(frames[outermost]);
        auto where = [&](const stack_frame& parent_frame) {
            return construct.empty() ? where_of(parent_frame) : construct;
        };
        if (saw_dispatcher && j < frames.size()) {
            // This thread encountered the construct: its caller's frames follow.
            std::string l = region_line(fc, tid, *parent, where(frames[j]), levels_out);
            s.out().line(l);
            rows.push_back({{"region", l}, {"lwp", tid}});
            i = j - 1;
            continue;
        }
        // A team member: its stack ends in the thread start; the parent task's frames are in
        // the thread that encountered the construct.
        std::string outermost_outlined;
        for (std::size_t k = i; k < j; ++k) {
            if (outlined_parent(fc, frames[k])) {
                outermost_outlined = frame_symbol(frames[k]);
            }
        }
        auto enc = depth < 8 ? find_encounter(fc, tid, outermost_outlined, *parent) : std::nullopt;
        const auto* other = enc ? &s.stack(enc->tid) : nullptr;
        std::string l =
            region_line(fc, tid, *parent, other != nullptr ? where((*other)[enc->frame]) : construct, levels_out);
        s.out().line(l);
        nlohmann::json region{{"region", l}, {"lwp", tid}};
        if (enc) {
            region["encountered_by"] = enc->tid;
        }
        rows.push_back(std::move(region));
        if (continued && enc) {
            std::string sep = continued_separator(s, enc->tid);
            s.out().line(sep);
            rows.push_back({{"continued_in", enc->tid}, {"thread", s.thread_number(enc->tid)}});
            print_folded(fc, enc->tid, *other, enc->frame, continued, rows, depth + 1);
        }
        return;
    }
}

}  // namespace

std::string frame_symbol(const stack_frame& f) {
    if (f.module != nullptr && f.module->elf) {
        std::uint64_t at = f.function ? f.function->low_pc() : f.module->to_file(virt_addr(f.pc()));
        if (auto sym = f.module->elf->symbol_at(at)) {
            return sym->name;
        }
        if (auto sym = f.module->elf->symbol_at(f.module->to_file(virt_addr(f.pc())))) {
            return sym->name;
        }
    }
    return f.function ? f.function->name : f.symbol_name;
}

bool in_runtime(const fold_context& fc, const stack_frame& f) {
    return fc.runtime != nullptr && f.module != nullptr && f.module->path == fc.runtime->path &&
           f.module->load_bias == fc.runtime->load_bias;
}

std::optional<std::string> outlined_parent(const fold_context& fc, const stack_frame& f) {
    if (f.is_inlined || in_runtime(fc, f)) {
        return std::nullopt;
    }
    auto d = fc.lib->demangle(frame_symbol(f));
    if (d.rc != DMPL_ok) {
        return std::nullopt;
    }
    return d.name;
}

std::string where_of(const stack_frame& f) {
    if (!f.line) {
        return {};
    }
    return fs::path(f.line->file).filename().string() + ":" + std::to_string(f.line->line);
}

std::string construct_where(const stack_frame& outlined) {
    if (!outlined.function) {
        return {};
    }
    const dwarf::function& fn = *outlined.function;
    if (fn.decl_line > 0 && !fn.decl_file.empty()) {
        return fs::path(fn.decl_file).filename().string() + ":" + std::to_string(fn.decl_line);
    }
    if (outlined.module != nullptr && outlined.module->elf) {
        if (dwarf::debug_info* dbg = outlined.module->elf->debug()) {
            if (auto l = dbg->line_at(fn.low_pc())) {
                return fs::path(l->file).filename().string() + ":" + std::to_string(l->line);
            }
        }
    }
    return {};
}

std::optional<std::size_t> encountering_frame(const fold_context& fc, const std::vector<stack_frame>& frames,
                                              const std::string& outlined) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frame_symbol(frames[i]) != outlined) {
            continue;
        }
        for (std::size_t j = i + 1; j < frames.size(); ++j) {
            if (is_dispatcher(fc, frames[j])) {
                for (std::size_t k = j + 1; k < frames.size(); ++k) {
                    if (!in_runtime(fc, frames[k])) {
                        return k;
                    }
                }
                return std::nullopt;
            }
            if (!in_runtime(fc, frames[j]) && !outlined_parent(fc, frames[j])) {
                break;
            }
        }
    }
    return std::nullopt;
}

std::optional<std::pair<std::string, std::size_t>> innermost_outlined(const fold_context& fc,
                                                                      const std::vector<stack_frame>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (outlined_parent(fc, frames[i])) {
            // clang: FUNC.omp_outlined_debug__ is called by FUNC.omp_outlined; report the
            // outermost of a chain of outlined frames (the one the runtime called).
            std::size_t j = i;
            while (j + 1 < frames.size() && outlined_parent(fc, frames[j + 1])) {
                ++j;
            }
            return std::make_pair(frame_symbol(frames[j]), j);
        }
    }
    return std::nullopt;
}

std::optional<fold_context> make_fold_context(session& s) {
    plugins::dmpl_process* proc = dmpl_quiet(s);
    if (proc == nullptr) {
        return std::nullopt;
    }
    fold_context fc;
    fc.s = &s;
    fc.lib = &proc->library();
    fc.runtime = find_runtime(proc->target()).module;
    if (auto n = fc.lib->rtl_names(DMPL_lang_c)) {
        fc.dispatcher = n->main_task_dispatcher;
        fc.invoker = n->microtask_invoker;
    }
    return fc;
}

bool folded_backtrace(session& s, bool continued) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return false;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return false;
    }
    const auto& frames = s.stack(s.selected_tid());
    if (!innermost_outlined(*fc, frames)) {
        return false;
    }
    nlohmann::json rows = nlohmann::json::array();
    print_folded(*fc, s.selected_tid(), frames, 0, continued, rows, 0);
    s.out().field("frames", rows);
    return true;
}

}  // namespace ompdbg::app::dmpl_impl
