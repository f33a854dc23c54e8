// The OpenMP runtime's frames in a stack (omp/stack_folding.hpp): which are the runtime's,
// which run an outlined routine, and where a region was encountered, through the DMPL
// library's names of the runtime's dispatcher and outlined routines.

#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "omp/dmpl_process.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/plugins/dmpl.h"

namespace ompdbg::debugger {

namespace fs = std::filesystem;

namespace {

/// `set omp-bt-filter` of a session (`session::model_state()`): on by default.
struct omp_bt_filter_setting {
    bool on = true;
};

}  // namespace

bool& omp_bt_filter(session& s) {
    return s.model_state().get<omp_bt_filter_setting>().on;
}

bool is_dispatcher(const fold_context& fc, const stack_frame& f) {
    return in_runtime(fc, f) && frame_symbol(f) == fc.dispatcher;
}

int dispatched_regions(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t end) {
    int n = 0;
    for (std::size_t k = 0; k < end && k < frames.size(); ++k) {
        n += is_dispatcher(fc, frames[k]) ? 1 : 0;
    }
    return n;
}

std::optional<region_encounter> find_encounter(const fold_context& fc, pid_t tid, const std::string& outlined,
                                               const std::string& parent) {
    session& s = *fc.s;
    tracer::target* tgt = s.target();
    // The thread that called the dispatcher for the same outlined routine.
    for (tracer::thread* th : tgt->threads()) {
        if (th->tid() == tid || th->state() == tracer::thread_state::exited) {
            continue;
        }
        if (auto k = encountering_frame(fc, s.stack(th->tid()), outlined)) {
            return region_encounter{th->tid(), *k};
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
                return region_encounter{th->tid(), q};
            }
            break;
        }
    }
    return std::nullopt;
}

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

}  // namespace ompdbg::debugger
