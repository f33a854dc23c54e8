#pragma once
// Shared by the commands_omp*.cpp files: the helpers that every OpenMP command uses to
// print (thread labels, numbers). The OMPD state is the model's (libdebugger's
// omp/ompd_views.hpp reads it for them).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "command_args.hpp"
#include "session.hpp"

namespace ompdbg::app::omp_impl {

/// gdb's thread number of an LWP as text ("?" when unknown).
std::string thread_label(session& s, std::optional<pid_t> lwp);

/// The number, or "-".
std::string opt_num(std::optional<std::int64_t> v);

/// `omp bt [continued]` (commands_omp_bt.cpp).
void cmd_omp_bt(session& s, std::string_view args);

/// `catch omp EVENT [if COND]` (commands_omp_events.cpp).
void cmd_catch_omp(session& s, std::string_view args);

}  // namespace ompdbg::app::omp_impl
