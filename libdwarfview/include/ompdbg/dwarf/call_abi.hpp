#pragma once
/// The x86-64 System V calling convention (psABI 3.2.3) for values the debugger passes to
/// and gets back from a function it calls in the program (`print f(1)`) or finishes out of
/// (`finish`): which eightbytes go in integer registers, which in xmm registers, what goes
/// on the stack. Pure computation over types and bytes; the registers are applied by the
/// caller.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {

/// The class of one eightbyte (psABI 3.2.3). `none` is an eightbyte the value does not use.
enum class abi_class { none, integer, sse, memory };

/// The classes of the (at most two) eightbytes of a value of type `t`: {memory, memory}
/// for values passed and returned in memory (larger than 16 bytes, unaligned fields,
/// long double and other x87 types).
std::array<abi_class, 2> classify_eightbytes(const type& t);

/// True for a C++ class the Itanium ABI passes by invisible reference and returns through a
/// hidden pointer whatever its size: one with a user-provided copy constructor or
/// destructor (or a base or member with one), as gdb's gnuv3_pass_by_reference decides.
bool is_passed_by_reference(const type& t);

/// True when a value of `t` is returned through a hidden pointer the caller passes in rdi
/// (and the callee hands back in rax). False for long double, which is passed in memory
/// but returned in st(0).
bool returned_in_memory(const type& t);

/// Where a call's arguments go: integer registers rdi, rsi, rdx, rcx, r8, r9 in order, xmm0..7
/// (low eightbyte of each), and the stack words above the return address, in order.
struct call_layout {
    std::vector<std::uint64_t> int_regs;                 ///< at most 6
    std::vector<std::array<std::byte, 16>> sse_regs;     ///< at most 8
    std::vector<std::byte> stack;                        ///< a multiple of 8 bytes
    /// AL for variadic callees: the number of xmm registers used.
    int sse_count() const { return static_cast<int>(sse_regs.size()); }
};

/// Lays out `args` (values already converted to the parameter types, bytes filled). With
/// `sret`, the hidden return-buffer pointer goes first, in rdi.
call_layout lay_out_call(std::span<const value> args, std::optional<std::uint64_t> sret);

/// The registers a returned value is read from.
struct return_registers {
    std::uint64_t rax = 0;
    std::uint64_t rdx = 0;
    std::array<std::byte, 16> xmm0{};
    std::array<std::byte, 16> xmm1{};
};

/// The bytes of a value of type `t` returned in registers; nullopt when it is returned in
/// memory (see returned_in_memory) or in x87 registers (long double), which this does not
/// decode.
std::optional<std::vector<std::byte>> returned_bytes(const type& t, const return_registers& r);

}  // namespace ompdbg::dwarf
