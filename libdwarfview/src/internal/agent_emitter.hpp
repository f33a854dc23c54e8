#pragma once
// The bytecode writer of the agent-expression compiler (agent_expr.cpp): opcodes with
// their operands, forward jumps patched once their target is known, and the static type
// of each value the code leaves on the agent's stack.

#include <cstdint>
#include <optional>
#include <vector>

#include "ompdbg/agent/agent_abi.h"
#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::dwarf::agent {

/// What the compiler knows about a value on the stack: every word holds the value sign-
/// or zero-extended from `size` bytes to 64 bits.
struct scalar {
    unsigned size = 4;
    bool is_signed = true;
    std::optional<type> pointee;   ///< pointers (and arrays decayed to them)
    bool is_pointer() const { return pointee.has_value(); }
};

/// Thrown (and caught inside the compiler) to refuse a condition with a reason.
struct refused {
    const char* why;
};

class emitter {
public:
    void op(ompdbg_agent_op o) { code_.push_back(static_cast<std::uint8_t>(o)); }
    void op8(ompdbg_agent_op o, std::uint8_t a) {
        op(o);
        code_.push_back(a);
    }
    void constant(std::uint64_t v) {
        op(OMPDBG_OP_CONST);
        for (int i = 0; i < 8; ++i) {
            code_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
        }
    }
    /// Emits a jump with a target to be set by `land`; returns its operand's position.
    std::size_t jump(ompdbg_agent_op o) {
        op(o);
        code_.push_back(0);
        code_.push_back(0);
        return code_.size() - 2;
    }
    /// Makes the jump whose operand is at `at` go to the next instruction emitted.
    void land(std::size_t at) {
        std::size_t here = code_.size();
        code_[at] = static_cast<std::uint8_t>(here);
        code_[at + 1] = static_cast<std::uint8_t>(here >> 8);
    }
    /// Extends the top word from its low `bytes` bytes (a no-op for 8).
    void normalise(unsigned bytes, bool is_signed) {
        if (bytes < 8) {
            op8(is_signed ? OMPDBG_OP_SEXT : OMPDBG_OP_ZEXT, static_cast<std::uint8_t>(bytes * 8));
        }
    }
    std::vector<std::uint8_t>& code() { return code_; }

private:
    std::vector<std::uint8_t> code_;
};

}  // namespace ompdbg::dwarf::agent
