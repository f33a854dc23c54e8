#pragma once
// What the code that reads and writes x86-64 machine code shares (out-of-line steps, jump
// pads, instruction relocation): one capstone handle with operand details, and little-endian
// immediates appended to generated code.

#include <capstone/capstone.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ompdbg::tracer::internal {

/// A capstone handle in 64-bit mode with instruction details and one instruction buffer.
class x86_decoder {
public:
    x86_decoder() {
        if (cs_open(CS_ARCH_X86, CS_MODE_64, &h_) != CS_ERR_OK) {
            h_ = 0;
            return;
        }
        cs_option(h_, CS_OPT_DETAIL, CS_OPT_ON);
        insn_ = cs_malloc(h_);
    }
    ~x86_decoder() {
        if (insn_ != nullptr) {
            cs_free(insn_, 1);
        }
        if (h_ != 0) {
            cs_close(&h_);
        }
    }
    x86_decoder(const x86_decoder&) = delete;
    x86_decoder& operator=(const x86_decoder&) = delete;

    bool ok() const { return h_ != 0 && insn_ != nullptr; }
    /// Decodes the instruction at `code` (address `addr`), advancing all three; false at the
    /// end or on bytes that are no instruction.
    bool next(const std::uint8_t*& code, std::size_t& size, std::uint64_t& addr) {
        return ok() && cs_disasm_iter(h_, &code, &size, &addr, insn_);
    }
    /// The instruction next() decoded last.
    const cs_insn& insn() const { return *insn_; }
    bool in_group(int g) const { return cs_insn_group(h_, insn_, static_cast<unsigned>(g)); }

private:
    csh h_ = 0;
    cs_insn* insn_ = nullptr;
};

/// Appends the low `bytes` bytes of `v`, least significant first.
inline void append_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
        out.push_back(static_cast<std::byte>(v >> (8 * i)));
    }
}

}  // namespace ompdbg::tracer::internal
