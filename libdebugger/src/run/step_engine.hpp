#pragma once
/// Private to run/: the state of one step and the loop that runs it, shared by
/// stepping.cpp (next, step, until, stepi, nexti) and finish.cpp (finish out of an inlined
/// copy steps in its caller).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ompdbg/debugger/run/stepping.hpp"
#include "ompdbg/debugger/run/stop_reporter.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::debugger {

class session;

namespace step_engine {

/// The session and the front end a step reports to.
struct step_context {
    session& s;
    stop_reporter& report;
};

/// Where a run-time pc is: its module, DWARF and file address.
struct code_pos {
    const tracer::loaded_module* module = nullptr;
    dwarf::debug_info* dbg = nullptr;
    std::uint64_t file_pc = 0;
    std::uint64_t bias = 0;
};

code_pos locate(tracer::process& p, std::uint64_t pc);

/// The outermost (physical) function containing the pc, with run-time ranges.
std::optional<dwarf::function> physical_function(const code_pos& c);

/// The canonical frame address of `tid`'s innermost frame (sp + 8 when it cannot unwind).
std::uint64_t frame_cfa(tracer::process& p, pid_t tid);

struct step_state {
    code_pos pos;                                    ///< of the function being stepped
    std::optional<dwarf::function> fn;
    std::optional<dwarf::addr_range> range;          ///< run-time
    int line = 0;
    std::string file;
    std::uint64_t cfa = 0;
    std::uint64_t start_pc = 0;
    bool frame_changed = false;
    /// `finish` out of an inlined copy: the stop always shows the frame line (gdb).
    bool always_frame_line = false;
    /// The function instance (DIE) of the frame being stepped: the innermost visible one,
    /// an inlined copy or the physical function (gdb's step frame id, within one frame).
    const void* frame_die = nullptr;
};

/// `st` describes the line, function and frame instance at `pc`.
void set_range(step_state& st, tracer::process& p, std::uint64_t pc);

/// Steps `tid` one instruction at a time (calls run to their return when they are not
/// entered) until the step described by `st` ends; reports where. Returns true when it
/// ended normally at a new line.
bool step_loop(step_context& cx, pid_t tid, step_mode mode, step_state& st);

}  // namespace step_engine
}  // namespace ompdbg::debugger
