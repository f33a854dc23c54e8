#pragma once
// Shared by the files of the OpenMP view through DMPL (the target's OpenMP runtime and its
// DMPL library are the model's: libdebugger's omp/dmpl_runtime.hpp): the folding of the
// runtime's frames (omp_stack_folding.cpp), the DWARF facts of a variable's location
// (outlined_locals.cpp), and the commands built on them (commands_dmpl.cpp,
// commands_omp_threadprivate.cpp, gomp_views.cpp). The one file of apps/ that includes the
// DMPL API (dmpl.h); the model's part of it moves to libdebugger (issue 19).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::app::dmpl_impl {

// ---- DWARF facts about a variable's location (outlined_locals.cpp) ---------------------

/// What a variable's DW_AT_location says about where it lives.
struct location_facts {
    bool tls = false;    ///< DW_OP_form_tls_address / DW_OP_GNU_push_tls_address
    bool deref = false;  ///< DW_OP_deref: reached through a pointer (gcc's .omp_data_i)
    /// One expression for the whole scope (not a location list, not absent): where the
    /// variable lives can tell how the region shares it.
    bool single = false;
};

/// The location_facts of `v` (all false without a location).
location_facts facts_of(const dwarf::variable& v);

// ---- the runtime's frames folded (omp_stack_folding.cpp) -------------------------------

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

/// Whether frame `f` runs code of the OpenMP runtime.
bool in_runtime(const fold_context& fc, const stack_frame& f);

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

/// The folding context of the session's target; nullopt without a usable DMPL library.
std::optional<fold_context> make_fold_context(session& s);

/// `bt` with the OpenMP runtime folded (`continued`: `omp bt continued`): true when it
/// printed (the stack runs an outlined routine), false to let the ordinary backtrace print.
bool folded_backtrace(session& s, bool continued);

// ---- the commands and views built on them ----------------------------------------------

/// `omp threadprivate NAME` (commands_omp_threadprivate.cpp).
void cmd_omp_threadprivate(session& s, std::string_view args);

/// `info locals` of an outlined region: the user's variables by source name with their
/// scoping; false when the selected frame is no outlined routine.
bool outlined_locals(session& s);   // outlined_locals.cpp

/// The function a `call` just before `return_address` went to: `call f@plt` (E8 rel32 to a
/// PLT stub, named by the GOT slot it jumps through: elf_file::plt_symbol_at), a direct
/// call, or -fno-plt's `call *GOT(%rip)` (the slot's relocation, else what the slot holds);
/// "" when it cannot tell.
/// libgomp's GOMP_barrier tail-calls its unnamed internals, so no frame of it is left on
/// the stack: the caller's call instruction still names it.
std::string called_function(tracer::target& tgt, std::uint64_t return_address);   // gomp_views.cpp

/// `omp threads` of a libgomp program, from DMPL and the threads' stacks (gomp_views.cpp).
void gomp_omp_threads(session& s, fold_context& fc, const tracer::loaded_module* rt);

/// `omp parallel` of a libgomp program (gomp_views.cpp).
void gomp_omp_parallel(session& s, fold_context& fc, const tracer::loaded_module* rt);

}  // namespace ompdbg::app::dmpl_impl
