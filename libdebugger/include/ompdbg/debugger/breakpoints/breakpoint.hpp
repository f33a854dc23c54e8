#pragma once
/// gdb's numbered user breakpoints: a spec, its resolved locations, condition, hit count,
/// commands; catchpoints share the numbering and this type.

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/base/addr.hpp"

namespace ompdbg::debugger {

/// One resolved address of a logical breakpoint.
struct breakpoint_location {
    virt_addr address;
    std::string function;          ///< the function's name: "main", "ns::foo"
    /// gdb's name of that function's symbol, as `info breakpoints` shows it: "main" in C,
    /// "ns::foo(int)" in C++ (function_print_name); the ELF symbol without DWARF.
    std::string symbol;
    /// Without a line: how far past the start of ELF symbol `function` the address is
    /// (`info breakpoints` shows <sq+4>, past the frame set-up `break sq` skips).
    std::uint64_t symbol_offset = 0;
    std::string file;
    int line = 0;
    bool enabled = true;
    /// Where the address came from, to re-resolve after launch / library load.
    std::string module_path;
    std::uint64_t file_address = 0;
};

/// A user breakpoint (gdb's numbered breakpoint): a spec, its locations, condition,
/// hit count, commands. Pending while no location is found (shared library not loaded).
struct breakpoint {
    int number = 0;
    std::string spec;              ///< as typed: "foo", "file.c:12", "*0x401000"
    bool temporary = false;        ///< tbreak
    bool enabled = true;
    bool pending = false;
    std::string condition;         ///< empty: none
    int hit_count = 0;
    int ignore_count = 0;
    std::optional<pid_t> thread_tid;     ///< `break ... thread N` (not parsed yet)
    /// MPI ranks it is planted in (the focus when it was set, as TotalView and DDT do);
    /// empty: every rank.
    std::vector<int> ranks;
    /// Whether it applies to MPI rank `rank` (-1: a process that is not a rank).
    bool applies_to_rank(int rank) const {
        return ranks.empty() || rank < 0 || std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
    }
    std::vector<std::string> commands;   ///< `commands N` ... `end` (may hold silent, continue)
    /// `dprintf`: a hit runs `commands` (its one `printf`) in the hitting thread and goes on,
    /// never a stop.
    bool dprintf = false;
    std::vector<breakpoint_location> locations;
    /// Catchpoints (`catch omp parallel-begin`): what is caught, and the text reported on a
    /// hit of thread `tid` instead of the frame line (empty function: an ordinary
    /// breakpoint). The function keeps what it needs (the session it was set in).
    std::string catch_what;
    std::function<std::string(pid_t tid)> describe_hit;
    /// Catchpoints whose condition names the event's fields (`catch omp parallel-begin if
    /// team_size != 8`) evaluate it here instead of in the frame; may throw like a condition.
    std::function<bool(pid_t tid, const std::string& condition)> test_condition;
};

}  // namespace ompdbg::debugger
