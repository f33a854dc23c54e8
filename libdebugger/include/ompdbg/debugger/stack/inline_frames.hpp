#pragma once
/// gdb's hidden inline frames. When a step stops at the first instruction of inlined
/// copies (their entry, or the start of one of their address ranges), gdb shows the
/// caller at the call site and hides those copies; each further `step` enters one of them
/// without running the program (gdb's skip_inline_frames / step_into_inline_frame).
/// build_stack leaves the hidden copies out of frame 0; a resume forgets them.

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::debugger {

class session;

/// How many inlined copies are hidden at the top of `tid`'s stack (0 for none).
int hidden_inline_frames(session& s, pid_t tid);
/// Hides the `n` innermost inlined copies of `tid`'s frame 0 (drops its cached stack).
void set_hidden_inline_frames(session& s, pid_t tid, int n);
/// Forgets every thread's hidden copies (the target was resumed).
void forget_hidden_inline_frames(session& s);

/// The number of innermost copies of `chain` (innermost first, as function_chain_at
/// returns it) that `file_pc` enters: inlined copies whose entry is `file_pc` or whose
/// range starts there (the address before is outside the copy).
int inline_entries_at(const std::vector<dwarf::function>& chain, std::uint64_t file_pc);

}  // namespace ompdbg::debugger
