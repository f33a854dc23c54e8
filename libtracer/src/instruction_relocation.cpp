// Relocating the instructions under a jump pad's jmp (internal/instruction_relocation.hpp).

#include "internal/instruction_relocation.hpp"
#include "internal/x86_decoder.hpp"

#include <climits>
#include <cstring>

namespace ompdbg::tracer::internal {

namespace {

/// rel32 from the end of an instruction at `at` of `length` bytes to `target`.
std::optional<std::int32_t> rel32(std::uint64_t at, std::size_t length, std::uint64_t target) {
    auto d = static_cast<std::int64_t>(target - (at + length));
    if (d < INT32_MIN || d > INT32_MAX) {
        return std::nullopt;
    }
    return static_cast<std::int32_t>(d);
}

/// The condition code of a jcc (rel8 0x70-0x7f, rel32 0x0f 0x80-0x8f); nullopt otherwise.
std::optional<unsigned> jcc_condition(const cs_x86& x) {
    if (x.opcode[0] >= 0x70 && x.opcode[0] <= 0x7f) {
        return x.opcode[0] & 0xfu;
    }
    if (x.opcode[0] == 0x0f && x.opcode[1] >= 0x80 && x.opcode[1] <= 0x8f) {
        return x.opcode[1] & 0xfu;
    }
    return std::nullopt;
}

/// After a function's final `ret`: true when whole nop or int3 instructions (alignment
/// padding) follow it up to `min_length` covered bytes, which `covered` then counts.
bool cover_padding(x86_decoder& dec, const std::uint8_t*& code, std::size_t& size, std::uint64_t& at,
                   std::size_t& covered, std::size_t min_length) {
    while (covered < min_length) {
        if (!dec.next(code, size, at)) {
            return false;
        }
        const cs_insn& pad = dec.insn();
        if (pad.id != X86_INS_NOP && pad.id != X86_INS_INT3) {
            return false;
        }
        covered += pad.size;
    }
    return true;
}

}  // namespace

std::optional<std::uint32_t> relocated_code::original_offset(std::uint32_t r) const {
    for (auto& [o, n] : starts) {
        if (n == r) {
            return o;
        }
    }
    return std::nullopt;
}

std::optional<std::uint32_t> relocated_code::relocated_offset(std::uint32_t o) const {
    for (auto& [orig, n] : starts) {
        if (orig == o) {
            return n;
        }
    }
    return std::nullopt;
}

relocation relocate_instructions(std::span<const std::byte> bytes, std::uint64_t addr, std::uint64_t dest,
                                 std::size_t min_length, std::uint64_t function_end) {
    relocation r;
    x86_decoder dec;
    if (!dec.ok()) {
        r.refusal = "no disassembler";
        return r;
    }
    relocated_code out;
    const auto* code = reinterpret_cast<const std::uint8_t*>(bytes.data());
    std::size_t size = bytes.size();
    std::uint64_t at = addr;
    while (out.covered < min_length) {
        if (!dec.next(code, size, at)) {
            r.refusal = "the instructions at the site do not decode (or the function ends first)";
            return r;
        }
        const cs_insn& insn = dec.insn();
        const cs_x86& x = insn.detail->x86;
        std::uint64_t from = insn.address;
        std::uint64_t to = dest + out.code.size();
        out.starts.emplace_back(static_cast<std::uint32_t>(from - addr), static_cast<std::uint32_t>(out.code.size()));
        out.covered += insn.size;
        bool imm = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;
        if (insn.id == X86_INS_INT3) {
            r.refusal = "another breakpoint is inside the bytes the jump would replace";
            return r;
        }
        if (dec.in_group(CS_GRP_CALL)) {
            r.refusal = "a call is inside the bytes the jump would replace";
            return r;
        }
        if (insn.id == X86_INS_RET && x.op_count == 0 && function_end != 0 && from + insn.size == function_end) {
            const auto* raw = reinterpret_cast<const std::byte*>(insn.bytes);
            out.code.insert(out.code.end(), raw, raw + insn.size);
            if (!cover_padding(dec, code, size, at, out.covered, min_length)) {
                r.refusal = "a return, system call or interrupt is inside the bytes the jump would replace";
                return r;
            }
            break;
        }
        if (dec.in_group(CS_GRP_RET) || dec.in_group(CS_GRP_IRET) || dec.in_group(CS_GRP_INT) ||
            dec.in_group(CS_GRP_PRIVILEGE) || insn.id == X86_INS_SYSCALL || insn.id == X86_INS_XBEGIN ||
            insn.id == X86_INS_XABORT || insn.id == X86_INS_XEND) {
            r.refusal = "a return, system call or interrupt is inside the bytes the jump would replace";
            return r;
        }
        if (insn.id == X86_INS_JMP && imm) {
            auto d = rel32(to, 5, static_cast<std::uint64_t>(x.operands[0].imm));
            if (!d) {
                r.refusal = "a jump whose target the pad cannot reach";
                return r;
            }
            out.code.push_back(std::byte{0xe9});
            append_le(out.code, static_cast<std::uint32_t>(*d), 4);
            continue;
        }
        if (dec.in_group(CS_GRP_JUMP) || dec.in_group(CS_GRP_BRANCH_RELATIVE)) {
            auto cc = jcc_condition(x);
            if (!cc || !imm) {
                r.refusal = "an indirect jump, loop or jrcxz is inside the bytes the jump would replace";
                return r;
            }
            auto d = rel32(to, 6, static_cast<std::uint64_t>(x.operands[0].imm));
            if (!d) {
                r.refusal = "a jump whose target the pad cannot reach";
                return r;
            }
            out.code.push_back(std::byte{0x0f});
            out.code.push_back(static_cast<std::byte>(0x80 | *cc));
            append_le(out.code, static_cast<std::uint32_t>(*d), 4);
            continue;
        }
        std::size_t first = out.code.size();
        const auto* raw = reinterpret_cast<const std::byte*>(insn.bytes);
        out.code.insert(out.code.end(), raw, raw + insn.size);
        for (int i = 0; i < x.op_count; ++i) {
            const cs_x86_op& op = x.operands[i];
            if (op.type != X86_OP_MEM || op.mem.base != X86_REG_RIP) {
                continue;
            }
            // The displacement is relative to the instruction's end, which moves by
            // (to - from): re-target it to the same data.
            std::size_t off = x.encoding.disp_offset;
            std::int32_t disp = 0;
            if (x.encoding.disp_size != 4 || off == 0 || off + 4 > insn.size) {
                r.refusal = "a rip-relative operand the relocator does not understand";
                return r;
            }
            std::memcpy(&disp, out.code.data() + first + off, 4);
            std::int64_t moved = static_cast<std::int64_t>(disp) + static_cast<std::int64_t>(from - to);
            if (disp != op.mem.disp || moved < INT32_MIN || moved > INT32_MAX) {
                r.refusal = "a rip-relative operand the pad cannot reach";
                return r;
            }
            auto d32 = static_cast<std::int32_t>(moved);
            std::memcpy(out.code.data() + first + off, &d32, 4);
        }
    }
    r.moved = std::move(out);
    return r;
}

std::optional<std::string> branch_into(std::span<const std::byte> code, std::uint64_t start, std::uint64_t lo,
                                       std::uint64_t hi) {
    x86_decoder dec;
    if (!dec.ok()) {
        return "no disassembler";
    }
    const auto* p = reinterpret_cast<const std::uint8_t*>(code.data());
    std::size_t size = code.size();
    std::uint64_t at = start;
    while (size > 0) {
        if (!dec.next(p, size, at)) {
            return "the function does not decode (data in code?)";
        }
        const cs_insn& insn = dec.insn();
        const cs_x86& x = insn.detail->x86;
        if (insn.address > lo && insn.address < hi) {
            continue;   // the patched instructions themselves
        }
        bool imm = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;
        bool branch = dec.in_group(CS_GRP_JUMP) || dec.in_group(CS_GRP_BRANCH_RELATIVE) || dec.in_group(CS_GRP_CALL);
        if (!branch) {
            continue;
        }
        if (imm) {
            auto target = static_cast<std::uint64_t>(x.operands[0].imm);
            if (target > lo && target < hi) {
                return "a jump in the function lands inside the bytes the jump would replace";
            }
        } else if (dec.in_group(CS_GRP_JUMP)) {
            return "the function has an indirect jump (a jump table may land anywhere)";
        }
    }
    return std::nullopt;
}

}  // namespace ompdbg::tracer::internal
