#pragma once
/// x86-64 disassembly through capstone, in gdb's AT&T spelling ("mov    $0x0,%eax",
/// "call   0x401126 <add>") for `x/i` and `display/i $pc`.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace ompdbg::debugger {

struct instruction {
    std::uint64_t address = 0;
    std::size_t size = 0;
    std::string text;       ///< "mov    $0x0,%eax" (branch targets get " <sym+off>" from the labeler)
};

class disassembler {
public:
    /// Throws ompdbg::error when capstone cannot be opened.
    disassembler();
    ~disassembler();
    disassembler(const disassembler&) = delete;
    disassembler& operator=(const disassembler&) = delete;

    /// Decodes one instruction at `address` from `code` (which starts at `address`).
    /// An undecodable byte gives "(bad)" with size 1, as gdb does.
    /// `label(addr)` returns "main+4" or "" for branch/call targets.
    instruction decode(std::uint64_t address, std::span<const std::byte> code,
                       const std::function<std::string(std::uint64_t)>& label) const;

private:
    std::size_t handle_ = 0;         ///< capstone, AT&T syntax with details
    std::size_t intel_handle_ = 0;   ///< capstone, Intel syntax (mnemonics without suffixes)
};

}  // namespace ompdbg::debugger
