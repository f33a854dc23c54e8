#pragma once
/// gdb's data watchpoints (`watch`, `rwatch`, `awatch`), numbered with the breakpoints.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/watchpoint.hpp"

namespace ompdbg::debugger {

/// A data watchpoint: the watched value, the bytes last reported, and what is armed in the
/// process for it.
struct watchpoint {
    int number = 0;
    std::string expression;            ///< as shown: "counter", "-location counter"
    tracer::watch_kind kind = tracer::watch_kind::write;
    tracer::watch_mode mode = tracer::watch_mode::software;
    dwarf::value value;                ///< the watched lvalue (type and address)
    std::vector<std::byte> old_bytes;  ///< the value last reported
    int tracer_id = 0;                 ///< process::add_watchpoint's id (0: not armed)
    /// A computed expression (`watch a + b`): the memory its value is read from, watched
    /// piece by piece (empty for an lvalue), and the ids of the pieces after the first.
    std::vector<std::pair<std::uint64_t, std::size_t>> chain;
    std::vector<int> chain_ids;
    int hit_count = 0;
    bool enabled = true;               ///< `disable N`: kept, but not armed in the process
    /// A watchpoint on a frame's locals ends with the frame: the return address it is
    /// planted at and the frame's CFA (0: global, never ends).
    std::uint64_t scope_pc = 0;
    std::uint64_t scope_cfa = 0;
    pid_t scope_tid = 0;
};

}  // namespace ompdbg::debugger
