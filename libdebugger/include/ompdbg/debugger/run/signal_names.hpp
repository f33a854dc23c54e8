#pragma once
/// gdb's name and description of a Linux signal, as stop reports, `info signals` and the
/// MPI views show them.

#include <string>

namespace ompdbg::debugger {

/// gdb's name and description of a signal: ("SIGSEGV", "Segmentation fault").
std::string signal_name(int signo);
std::string signal_description(int signo);

}  // namespace ompdbg::debugger
