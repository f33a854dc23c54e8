#pragma once
// Where a variable lives at a breakpoint site, as agent bytecode (agent_expr.cpp): the
// variable's DWARF location at the site pc translated into register reads and address
// arithmetic. Only single-operation locations are taken (a register, a frame-base,
// register or CFA-relative address, a fixed address), and a thread-local's offset in its
// module's TLS block: anything else is refused.

#include <cstdint>
#include <optional>

#include "internal/agent_emitter.hpp"
#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::dwarf::agent {

class locator {
public:
    /// `caller`: locate in the frame of the caller of the function whose first instruction
    /// is the site (agent_caller_field): rsp is 8 higher, rip the return address.
    /// `tls_block`: agent_compile_options::tls_block.
    locator(const debug_info& info, std::uint64_t file_pc, std::uint64_t bias, bool caller = false,
            std::optional<std::int64_t> tls_block = std::nullopt)
        : info_(info), file_pc_(file_pc), bias_(bias), caller_(caller), tls_block_(tls_block) {}
    /// Pushes the run-time address of `v` when it is in memory; false when it is in a
    /// register. Throws refused for what the agent cannot locate.
    bool push_address(const variable& v, emitter& out);
    /// Pushes the raw register of `v` when it lives in one; false when it is in memory.
    bool push_value(const variable& v, unsigned size, emitter& out);

private:
    const debug_info& info_;
    std::uint64_t file_pc_;
    std::uint64_t bias_;
    bool caller_;
    std::optional<std::int64_t> tls_block_;
};

}  // namespace ompdbg::dwarf::agent
