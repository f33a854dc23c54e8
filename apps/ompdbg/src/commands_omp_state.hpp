#pragma once
// Shared by the commands_omp*.cpp files: the OMPD state of the model (libdebugger's
// omp/ompd_state.hpp: the library, each process's address space, require_ompd) and the
// helpers that every OpenMP command uses to print (thread labels, numbers).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "command_args.hpp"
#include "session.hpp"
#include "ompdbg/debugger/omp/ompd_state.hpp"

namespace ompdbg::app::omp_impl {

/// The model's OMPD state and require_ompd, by the names the commands knew.
using namespace debugger::ompd;

/// gdb's thread number of an LWP as text ("?" when unknown).
std::string thread_label(session& s, std::optional<pid_t> lwp);

/// The number, or "-".
std::string opt_num(std::optional<std::int64_t> v);

/// `omp bt [continued]` (commands_omp_bt.cpp).
void cmd_omp_bt(session& s, std::string_view args);

/// `catch omp EVENT [if COND]` (commands_omp_events.cpp).
void cmd_catch_omp(session& s, std::string_view args);

}  // namespace ompdbg::app::omp_impl
