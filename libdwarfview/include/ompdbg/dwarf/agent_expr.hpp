#pragma once
/// Compiling `break ... if COND` conditions into the bytecode of ompdbg's in-target agent
/// (agent/include/ompdbg/agent/agent_abi.h; gdb's agent expressions are the model). The
/// bytecode reads the registers a jump pad saved at the site and memory, so only what can
/// be located from the site's registers compiles: integer, pointer, bool and enum values
/// of locals and parameters in a register or at a frame-base/CFA/register-relative address,
/// globals at a fixed address, members, array elements and dereferences of such, integer
/// constants, `$reg`, casts to integer and pointer types, arithmetic, comparisons and
/// logical operators with C's conversions; thread-locals of a module in the static TLS
/// area. Everything else (calls, floating point, convenience variables, optimized-out or
/// multi-piece locations) is refused with a reason, and the condition is evaluated by the debugger at a stop.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::dwarf {

class debug_info;

struct agent_compile_result {
    std::vector<std::uint8_t> code;   ///< empty when refused
    std::string reason;               ///< why it was refused ("calls a function", ...)
    bool pointer = false;             ///< the value's type is a pointer (dprintf's %s, %p)
    bool ok() const { return !code.empty(); }
};

/// A name a condition may use for a value in the caller of the function whose first
/// instruction is the site: `catch omp parallel-begin if team_size != 4` names the size of
/// the team the OpenMP runtime's __kmp_fork_call is forking. `expression` is compiled with
/// the caller module's DWARF at each call site: there the caller's callee-saved registers
/// are the site's, its rsp is 8 above the site's and its pc the return address on top of
/// the stack. At a return address not listed the condition is undecided (the thread stops
/// and the debugger evaluates it). Without return addresses the name is refused.
struct agent_caller_field {
    std::string name;
    std::string expression;
    const debug_info* info = nullptr;              ///< the caller's module
    std::uint64_t load_bias = 0;
    std::vector<std::uint64_t> return_addresses;   ///< run-time addresses
};

/// What a condition may name besides the site's own variables and registers.
struct agent_compile_options {
    std::vector<agent_caller_field> fields;   ///< names for values of the caller (above)
    /// The address of the site module's TLS block minus the thread pointer (fs_base): the
    /// same in every thread for a module in the static TLS area (x86-64 TLS variant II),
    /// so a thread-local is read at fs_base + tls_block + its offset. nullopt: refused.
    std::optional<std::int64_t> tls_block;
};

/// Compiles `text` for a breakpoint at file address `file_pc` of the module whose DWARF is
/// `info`, loaded with `load_bias` (absolute addresses in the bytecode are run-time ones).
/// Never throws: a syntax error or an unknown name is a refusal too (the debugger's own
/// evaluation reports it at the stop, as without the agent).
agent_compile_result compile_agent_condition(std::string_view text, const debug_info& info, std::uint64_t file_pc,
                                             std::uint64_t load_bias, const agent_compile_options& options = {});

/// The CFA rule at `file_pc` from the module's call-frame information: DWARF register and
/// offset (CFA = reg + offset); nullopt when the rule is not of that form or unknown.
struct cfa_rule {
    int dwarf_regno = 0;
    std::int64_t offset = 0;
};
std::optional<cfa_rule> cfa_rule_at(const debug_info& info, std::uint64_t file_pc);

}  // namespace ompdbg::dwarf
