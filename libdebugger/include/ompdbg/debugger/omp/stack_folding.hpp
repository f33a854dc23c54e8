#pragma once
/// The OpenMP runtime's frames in a thread's stack, through the DMPL library's names of the
/// runtime's dispatcher and outlined routines (issue 5): which frames are the runtime's,
/// which run an outlined routine and of which user function, where a region was
/// encountered (also in another thread: a team member's region goes on in the thread that
/// encountered it), and where each thread of a libgomp program stands in OpenMP. The CLI
/// folds `bt` with it (`[omp parallel in main at fig8.c:21, thread 2 of 4]`) and shows
/// `omp threads` / `omp parallel` of libgomp; `ompdbg triage` labels threads with it.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/omp/gomp_team_reader.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::plugins {
class dmpl_library;   // plugins/dmpl_host.hpp: only libdebugger's files use it
}

namespace ompdbg::debugger {

class session;

/// The ELF symbol of a frame's function (the mangled routine name DMPL demangles).
std::string frame_symbol(const stack_frame& f);

/// What the folding needs to know about the runtime.
struct fold_context {
    session* s = nullptr;
    plugins::dmpl_library* lib = nullptr;
    const tracer::loaded_module* runtime = nullptr;
    std::string dispatcher;
    std::string invoker;
};

/// `set omp-bt-filter on|off` of session `s` (kept in `session::model_state()`): plain `bt`
/// folds the OpenMP runtime's frames of an outlined region into one line (on by default).
/// Frame numbers are the stack's own either way.
bool& omp_bt_filter(session& s);

/// The folding context of the session's target; nullopt without a usable DMPL library.
std::optional<fold_context> make_fold_context(session& s);

/// Whether frame `f` runs code of the OpenMP runtime.
bool in_runtime(const fold_context& fc, const stack_frame& f);

/// Whether frame `f` is the runtime's dispatcher (the call that runs a region's routine).
bool is_dispatcher(const fold_context& fc, const stack_frame& f);

/// The user's function when `f` runs an outlined routine (DMPL_demangle_name), else nullopt.
/// A copy inlined into an outlined routine is not the routine (its pc's symbol is): the
/// routine is the frame of the physical frame's own subprogram, below its inlined copies.
std::optional<std::string> outlined_parent(const fold_context& fc, const stack_frame& f);

/// "file.c:21" of a frame's line; empty when unknown.
std::string where_of(const stack_frame& f);

/// Where the construct is: the outlined routine's declaration line (clang: the pragma), else
/// the line of its first instruction (gcc: the pragma too); empty when unknown.
std::string construct_where(const stack_frame& outlined);

/// Where a region runs from in another thread: the index of the first frame outward of the
/// dispatcher call that runs `outlined` (nullopt when `tid` did not encounter it).
std::optional<std::size_t> encountering_frame(const fold_context& fc, const std::vector<stack_frame>& frames,
                                              const std::string& outlined);

/// The innermost outlined routine (mangled) a thread runs, its frame index, or nullopt.
std::optional<std::pair<std::string, std::size_t>> innermost_outlined(const fold_context& fc,
                                                                      const std::vector<stack_frame>& frames);

/// How many regions `frames[0..end)` entered through the runtime's dispatcher: the labels
/// of a thread's stack count outward from its innermost region by these.
int dispatched_regions(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t end);

/// Where a team member's region was encountered: the thread and the index of its first
/// frame outward of the runtime's call of the region.
struct region_encounter {
    pid_t tid = 0;
    std::size_t frame = 0;
};

/// The thread other than `tid` that encountered the region `outlined` (the mangled routine
/// a team member runs, of the user's function `parent`), or nullopt.
std::optional<region_encounter> find_encounter(const fold_context& fc, pid_t tid, const std::string& outlined,
                                               const std::string& parent);

/// The function a `call` just before `return_address` went to: `call f@plt` (E8 rel32 to a
/// PLT stub, named by the GOT slot it jumps through: elf_file::plt_symbol_at), a direct
/// call, or -fno-plt's `call *GOT(%rip)` (the slot's relocation, else what the slot holds);
/// "" when it cannot tell.
/// libgomp's GOMP_barrier tail-calls its unnamed internals, so no frame of it is left on
/// the stack: the caller's call instruction still names it.
std::string called_function(tracer::target& tgt, std::uint64_t return_address);

// ---- the threads of a libgomp program (no OMPD) -----------------------------------------

/// One thread of a libgomp program as the DMPL library and its stack tell it.
struct gomp_thread_view {
    pid_t tid = 0;
    /// "encountering thread (OpenMP thread 0)", "team member", "OpenMP thread 2 of 4 (level
    /// 1)", "in libgomp (idle, or between regions)", "not in a parallel region".
    std::string role;
    std::string region;       ///< "omp parallel in main at fig8.c:21"
    std::string outlined;     ///< mangled outlined routine
    bool encountering = false;
    /// The thread's place in its team, from libgomp's per-thread data (libgomp only).
    std::optional<gomp_team_reader::place> place;
};

/// Every live thread of the session's target; `reader_problem` (when given) says why
/// libgomp's per-thread data cannot be read ("" when it can).
std::vector<gomp_thread_view> gomp_threads(session& s, const fold_context& fc, std::string* reader_problem = nullptr);

/// dmpl_thread_position of every live thread of the session's target (`ompdbg triage`);
/// drops the DMPL view of the target afterwards. Throws one line when there is no OpenMP
/// runtime or no usable DMPL library.
std::vector<dmpl_thread_position> dmpl_thread_positions(session& s);

}  // namespace ompdbg::debugger
