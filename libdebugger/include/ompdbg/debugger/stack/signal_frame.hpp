#pragma once
/// gdb's view of a signal trampoline frame on x86-64 Linux (`<signal handler called>`):
/// the kernel's rt_sigframe below it holds the interrupted registers, which gdb reports as
/// that frame's saved registers, and the interrupted stack pointer is its frame address.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

/// The saved registers of signal frame `f` in gdb's order (rax, rbx, ... r15, rip) with
/// their addresses in the sigcontext; the stack pointer's slot is `sp_slot`.
struct sigcontext_slots {
    std::vector<std::pair<std::string, std::uint64_t>> saved;
    std::uint64_t sp_slot = 0;
    std::uint64_t rip_slot = 0;
};
sigcontext_slots signal_frame_slots(const stack_frame& f);

/// The address gdb's `info frame` gives frame `f` ("frame at", "called by frame at"): its
/// CFA, or for a signal frame the interrupted stack pointer (read from the sigcontext;
/// the CFA when that cannot be read).
std::uint64_t frame_address(tracer::target& tgt, const stack_frame& f);

}  // namespace ompdbg::debugger
