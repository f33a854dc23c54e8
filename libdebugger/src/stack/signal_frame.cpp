// Where the kernel saved the interrupted registers of a signal frame (x86-64 Linux).
#include "ompdbg/debugger/stack/signal_frame.hpp"

#include <array>
#include <cstring>

namespace ompdbg::debugger {

namespace {

// At the trampoline (__restore_rt) the handler's return popped rt_sigframe.pretcode, so
// the frame's sp points at its `struct ucontext`: uc_flags, uc_link and the 24-byte
// uc_stack come first, then uc_mcontext, whose gregs start with r8 (asm/sigcontext.h).
constexpr std::uint64_t mcontext_offset = 40;
constexpr const char* sigcontext_order[] = {"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rdi",
                                            "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip"};
// gdb lists saved registers by its register numbers.
constexpr const char* gdb_order[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8",
                                     "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};

std::uint64_t slot_of(std::uint64_t sp, const std::string& name) {
    for (std::size_t i = 0; i < std::size(sigcontext_order); ++i) {
        if (name == sigcontext_order[i]) {
            return sp + mcontext_offset + 8 * i;
        }
    }
    return 0;
}

}  // namespace

sigcontext_slots signal_frame_slots(const stack_frame& f) {
    sigcontext_slots out;
    const std::uint64_t sp = f.physical.sp.addr();
    for (const char* name : gdb_order) {
        out.saved.emplace_back(name, slot_of(sp, name));
    }
    out.sp_slot = slot_of(sp, "rsp");
    out.rip_slot = slot_of(sp, "rip");
    return out;
}

std::uint64_t frame_address(tracer::target& tgt, const stack_frame& f) {
    if (!f.physical.is_signal_frame) {
        return f.physical.cfa.addr();
    }
    std::array<std::byte, 8> buf{};
    if (tgt.try_read_memory(virt_addr(signal_frame_slots(f).sp_slot), buf) != buf.size()) {
        return f.physical.cfa.addr();
    }
    std::uint64_t sp = 0;
    std::memcpy(&sp, buf.data(), 8);
    return sp;
}

}  // namespace ompdbg::debugger
