// Whether the arithmetic flags are dead at a site (internal/native_direct.hpp), so that a
// native condition that is false need not give them back.

#include "internal/native_direct.hpp"
#include "internal/x86_decoder.hpp"

namespace ompdbg::tracer::internal {

bool flags_dead_at(std::span<const std::byte> code, std::uint64_t site) {
    // Per flag: the eflags bits (capstone) that write it and that read it. An instruction
    // that leaves a flag undefined writes it too: no program can rely on its value after.
    struct flag_bits {
        std::uint64_t write, read;
    };
    static constexpr flag_bits flags[6] = {
        {X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_SET_OF | X86_EFLAGS_UNDEFINED_OF,
         X86_EFLAGS_TEST_OF | X86_EFLAGS_PRIOR_OF},
        {X86_EFLAGS_MODIFY_SF | X86_EFLAGS_RESET_SF | X86_EFLAGS_SET_SF | X86_EFLAGS_UNDEFINED_SF,
         X86_EFLAGS_TEST_SF | X86_EFLAGS_PRIOR_SF},
        {X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_RESET_ZF | X86_EFLAGS_SET_ZF | X86_EFLAGS_UNDEFINED_ZF,
         X86_EFLAGS_TEST_ZF | X86_EFLAGS_PRIOR_ZF},
        {X86_EFLAGS_MODIFY_AF | X86_EFLAGS_RESET_AF | X86_EFLAGS_SET_AF | X86_EFLAGS_UNDEFINED_AF,
         X86_EFLAGS_TEST_AF | X86_EFLAGS_PRIOR_AF},
        {X86_EFLAGS_MODIFY_PF | X86_EFLAGS_RESET_PF | X86_EFLAGS_SET_PF | X86_EFLAGS_UNDEFINED_PF,
         X86_EFLAGS_TEST_PF | X86_EFLAGS_PRIOR_PF},
        {X86_EFLAGS_MODIFY_CF | X86_EFLAGS_RESET_CF | X86_EFLAGS_SET_CF | X86_EFLAGS_UNDEFINED_CF,
         X86_EFLAGS_TEST_CF | X86_EFLAGS_PRIOR_CF},
    };
    x86_decoder d;
    const auto* p = reinterpret_cast<const std::uint8_t*>(code.data());
    std::size_t size = code.size();
    std::uint64_t addr = site;
    unsigned written = 0;
    for (int n = 0; n < 16 && d.next(p, size, addr); ++n) {
        const cs_insn& insn = d.insn();
        switch (insn.id) {
        // Moves, which neither read nor write a flag: passed over.
        case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX: case X86_INS_MOVSXD:
        case X86_INS_LEA: case X86_INS_PUSH: case X86_INS_POP: case X86_INS_NOP: case X86_INS_ENDBR64:
        case X86_INS_CDQE: case X86_INS_CQO: case X86_INS_CDQ: case X86_INS_MOVSS: case X86_INS_MOVSD:
        case X86_INS_MOVAPS: case X86_INS_MOVAPD: case X86_INS_MOVUPS: case X86_INS_MOVQ: case X86_INS_MOVD:
            continue;
        // Arithmetic whose flags capstone describes: what it reads must have been written.
        case X86_INS_ADD: case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR: case X86_INS_CMP:
        case X86_INS_TEST: case X86_INS_NEG: case X86_INS_INC: case X86_INS_DEC: case X86_INS_IMUL:
            break;
        default:
            return false;   // a branch, a call, anything else: live, to be sure
        }
        std::uint64_t ef = insn.detail->x86.eflags;
        if (ef == 0) {
            return false;
        }
        for (unsigned f = 0; f < 6; ++f) {
            if ((ef & flags[f].read) != 0 && (written & (1u << f)) == 0) {
                return false;
            }
            if ((ef & flags[f].write) != 0) {
                written |= 1u << f;
            }
        }
        if (written == 0x3f) {
            return true;
        }
    }
    return false;
}

}  // namespace ompdbg::tracer::internal
