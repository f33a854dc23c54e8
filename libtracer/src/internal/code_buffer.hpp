#pragma once
// Machine code being written: a jump pad (jump_pad.cpp) or a native condition
// (native_filter.cpp). Bytes spelled out by their callers, little-endian immediates, and
// 32-bit displacements whose target is known only later.

#include "internal/x86_decoder.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace ompdbg::tracer::internal {

class code_buffer {
public:
    /// `base`: the address the code will run at; 0 for position-independent code, whose
    /// targets are then offsets into it.
    explicit code_buffer(std::uint64_t base = 0) : base_(base) {}

    void bytes(std::initializer_list<int> b) {
        for (int x : b) {
            out_.push_back(static_cast<std::byte>(x));
        }
    }
    void u32(std::uint32_t v) { append_le(out_, v, 4); }
    void u64(std::uint64_t v) { append_le(out_, v, 8); }
    void append(const std::vector<std::byte>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
    /// An instruction ending in a 32-bit displacement (rip-relative operand, rel32 jump)
    /// filled in by resolve(); returns where the displacement is.
    std::size_t disp32(std::initializer_list<int> opcode) {
        bytes(opcode);
        std::size_t at = out_.size();
        u32(0);
        return at;
    }
    /// Points the displacement at `at` (its instruction ends right after it) to `target`,
    /// an address of the code's space (base + offset).
    void resolve(std::size_t at, std::uint64_t target) {
        auto d = static_cast<std::int32_t>(static_cast<std::int64_t>(target) - static_cast<std::int64_t>(base_ + at + 4));
        std::memcpy(out_.data() + at, &d, 4);
    }
    /// push %rax; lahf; seto %al: the arithmetic flags kept in %ax (SF ZF AF PF CF in %ah,
    /// OF in %al), cheaper than pushfq/popfq. restore_flags_from_ax gives them back.
    void save_flags_in_ax() { bytes({0x50, 0x9f, 0x0f, 0x90, 0xc0}); }
    /// add $0x7f,%al (OF again: 1 + 0x7f overflows, 0 + 0x7f does not); sahf. %rax itself
    /// is popped by the caller.
    void restore_flags_from_ax() { bytes({0x04, 0x7f, 0x9e}); }
    /// lea disp(%rsp),%rsp: moves the stack pointer without touching the flags (the red
    /// zone skipped or given back).
    void lea_rsp(std::int32_t disp) {
        bytes({0x48, 0x8d, 0xa4, 0x24});
        u32(static_cast<std::uint32_t>(disp));
    }
    std::uint64_t here() const { return base_ + out_.size(); }
    std::size_t size() const { return out_.size(); }
    std::vector<std::byte>& code() { return out_; }

private:
    std::uint64_t base_;
    std::vector<std::byte> out_;
};

}  // namespace ompdbg::tracer::internal
