// `omp bt` through OMPD (ompd_views.hpp; from the CLI, issue 19): the selected thread's
// stack with the OpenMP runtime's frames folded away and each outlined region shown as its
// construct, continued into the encountering thread's stack (as gdb's OMPD plugin does with
// `ompd bt on continued`). Every frame keeps its number in its own thread's stack.

#include "omp/ompd_state.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace ompdbg::debugger {

namespace fs = std::filesystem;
using plugins::omp_thread;
using plugins::ompd_address_space;

namespace {

/// Entry address → construct ("#pragma omp parallel" / "#pragma omp task") of the outlined
/// functions of thread `t`'s task and its generating tasks (the enclosing constructs).
std::map<std::uint64_t, std::string> outlined_functions(ompd_address_space& as, const omp_thread& t) {
    std::map<std::uint64_t, std::string> out;
    auto implicit_icv = as.find_icv("implicit-task-var");
    auto tk = as.current_task(t);
    for (int guard = 0; tk && guard < 64; ++guard) {
        if (auto f = as.task_function(*tk)) {
            bool implicit = implicit_icv && as.icv(*tk, *implicit_icv).number.value_or(0) != 0;
            out.emplace(*f, implicit ? "#pragma omp parallel" : "#pragma omp task");
        }
        tk = as.generating_task(*tk);
    }
    return out;
}

bool is_runtime_frame(const stack_frame& f, const fs::path& runtime) {
    return f.module != nullptr && !runtime.empty() && f.module->path == runtime;
}

/// Entry (run-time) address of a frame's function: DWARF entry, else the minimal symbol.
std::optional<std::uint64_t> frame_entry(const stack_frame& f) {
    if (f.module == nullptr) {
        return std::nullopt;
    }
    if (f.function && !f.is_inlined) {
        return f.module->to_runtime(f.function->entry_pc).addr();
    }
    if (!f.symbol_name.empty()) {
        return f.pc() - f.symbol_offset;
    }
    return std::nullopt;
}

/// Index of the outermost frame of `frames` (from `first` on) that runs an outlined
/// function of `outlined`; nullopt when there is none.
std::optional<std::size_t> outermost_outlined(const std::vector<stack_frame>& frames, std::size_t first,
                                              const std::map<std::uint64_t, std::string>& outlined) {
    std::optional<std::size_t> found;
    for (std::size_t i = first; i < frames.size(); ++i) {
        auto entry = frame_entry(frames[i]);
        if (entry && outlined.count(*entry)) {
            found = i;
        }
    }
    return found;
}

/// Frames [first, end) of `tid`, runtime frames folded, outlined functions named by their
/// construct.
omp_bt_segment fold_frames(session& s, pid_t tid, std::size_t first, std::size_t end, const fs::path& runtime,
                           const std::map<std::uint64_t, std::string>& outlined) {
    omp_bt_segment seg;
    seg.tid = tid;
    const auto& frames = s.stack(tid);
    for (std::size_t i = first; i < end && i < frames.size(); ++i) {
        const stack_frame& f = frames[i];
        if (is_runtime_frame(f, runtime)) {
            continue;
        }
        omp_bt_segment::frame out{i, {}, {}};
        auto entry = frame_entry(f);
        if (entry && outlined.count(*entry)) {
            std::string where = ompd::describe_code(s, *entry);
            auto at = where.find(" at ");
            out.location = at == std::string::npos ? "" : where.substr(at + 4);
            out.construct = outlined.at(*entry);
        }
        seg.frames.push_back(out);
    }
    return seg;
}

/// Where a worker's stack goes on: the thread that encountered the construct (thread 0 of
/// `par` or of an enclosing region) and the frame above its own call of `entry`.
struct continuation {
    pid_t tid = 0;
    omp_thread thread;
    std::size_t start = 0;
    std::optional<plugins::omp_parallel> region;  ///< the region `tid` continues in
};

std::optional<continuation> find_continuation(session& s, ompd_address_space& as, pid_t cur,
                                              std::optional<plugins::omp_parallel> par, std::uint64_t entry) {
    for (int guard = 0; par && guard < 64; ++guard, par = as.enclosing_parallel(*par)) {
        auto master = as.thread_in_parallel(*par, 0);
        auto mtid = master ? as.os_thread_of(*master) : std::nullopt;
        if (!mtid || *mtid == cur) {
            continue;
        }
        const auto& mframes = s.stack(*mtid);
        for (std::size_t i = 0; i + 1 < mframes.size(); ++i) {
            auto e = frame_entry(mframes[i]);
            if (e && *e == entry) {
                return continuation{*mtid, *master, i + 1, as.enclosing_parallel(*par)};
            }
        }
    }
    return std::nullopt;
}

}  // namespace

std::vector<omp_bt_segment> omp_folded_stack(session& s, bool continued) {
    ompd_address_space& as = ompd::require_ompd(s);
    auto probe = plugins::probe_openmp_runtime(as.target());
    pid_t tid = s.selected_tid();
    auto t = as.thread_of(tid);
    if (!t) {
        int n = s.thread_number(tid);
        error::send("Thread " + (n > 0 ? std::to_string(n) : std::string("?")) + " (LWP " + std::to_string(tid) +
                    ") is not an OpenMP thread.");
    }
    std::vector<omp_bt_segment> out;
    // With `continued`, a worker's stack ends at its outermost outlined function (below it
    // are only the runtime's and libc's thread start) and goes on in the thread that
    // encountered the construct, above its own call of the same function, and so on
    // outwards (gdb's `ompd bt on continued`).
    pid_t cur = tid;
    omp_thread cur_thread = *t;
    std::size_t start = 0;
    auto par = as.current_parallel(*t);
    for (int guard = 0; guard < 64; ++guard) {
        const auto& stack = s.stack(cur);
        auto outlined = outlined_functions(as, cur_thread);
        auto last = outermost_outlined(stack, start, outlined);
        std::optional<continuation> next;
        if (continued && last) {
            if (auto entry = frame_entry(stack[*last])) {
                next = find_continuation(s, as, cur, par, *entry);
            }
        }
        out.push_back(fold_frames(s, cur, start, next ? *last + 1 : stack.size(), probe.runtime_path, outlined));
        if (!next) {
            break;
        }
        cur = next->tid;
        cur_thread = next->thread;
        start = next->start;
        par = next->region;
    }
    return out;
}

}  // namespace ompdbg::debugger
