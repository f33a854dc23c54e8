#pragma once
/// Evaluating DWARF location descriptions (DW_AT_location, location lists, frame base).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <elfutils/libdw.h>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::dwarf {

/// What a location needs from the debugger; implemented by apps/ over a live or core
/// target and a selected frame. Addresses passed in and out are run-time addresses;
/// `load_bias()` converts (file addr + bias = run-time addr).
class location_context {
public:
    virtual ~location_context() = default;
    virtual std::uint64_t pc() const = 0;                  ///< run-time pc of the frame
    virtual std::uint64_t load_bias() const = 0;           ///< of the module holding the DIE
    /// Register by DWARF number (x86-64 psABI numbering), nullopt when unavailable in this
    /// frame (not saved by the callee).
    virtual std::optional<std::uint64_t> read_register(int dwarf_regno) const = 0;
    /// Reads target memory; throws ompdbg::error on failure.
    virtual void read_memory(std::uint64_t addr, std::span<std::byte> out) const = 0;
    /// Canonical frame address of the frame (DW_OP_call_frame_cfa).
    virtual std::optional<std::uint64_t> cfa() const = 0;
    /// Run-time address of the current thread's TLS block offset `offset` of this module.
    virtual std::optional<std::uint64_t> tls_address(std::uint64_t offset) const = 0;
    /// The value register `dwarf_regno` held on entry to the frame's function
    /// (DW_OP_entry_value), as the caller's call site describes it (see
    /// call_site_parameter_value); nullopt when that is not known.
    virtual std::optional<std::uint64_t> entry_register_value(int dwarf_regno) const {
        (void)dwarf_regno;
        return std::nullopt;
    }
};

struct location {
    struct memory { std::uint64_t addr; };               ///< run-time address
    struct register_ { int dwarf_regno; };
    struct implicit_value { std::vector<std::byte> bytes; };
    struct optimized_out {};
    struct piece { std::variant<memory, register_, implicit_value, optimized_out> where;
                   std::uint64_t size_bytes; };
    using pieces = std::vector<piece>;
    std::variant<memory, register_, implicit_value, optimized_out, pieces> value;
};

/// Evaluates the location of `var` in `ctx`. Throws ompdbg::error with a gdb-like message
/// for unsupported operations; returns optimized_out when no list entry covers the pc.
location evaluate_location(const variable& var, const location_context& ctx);

/// The value a caller passed in register `dwarf_regno` at the call that returns to
/// `return_pc` (run-time), from the DW_TAG_call_site (or DW_TAG_GNU_call_site) of the
/// caller's function in `caller_info` and its parameter's DW_AT_call_value, evaluated in
/// `caller` (the caller's frame). `callee_name` is checked against the call site's
/// DW_AT_call_origin when it names one (a tail call in between makes the value unknown);
/// a call site without one must have a DW_AT_call_target that gives `callee_entry`
/// (run-time) in the caller's frame. nullopt when the caller's DWARF does not describe
/// it, as gdb's DW_OP_entry_value.
std::optional<std::uint64_t> call_site_parameter_value(const debug_info& caller_info, const location_context& caller,
                                                       std::uint64_t return_pc, const std::string& callee_name,
                                                       std::uint64_t callee_entry, int dwarf_regno);

/// The value parameter `param` had on entry to its function (gdb's `n@entry`): its
/// location at the function's first address `entry_pc` (run-time) when that is a single
/// register, resolved through ctx.entry_register_value. nullopt when not known.
std::optional<std::uint64_t> parameter_entry_value(const variable& param, std::uint64_t entry_pc,
                                                   const location_context& ctx);

}  // namespace ompdbg::dwarf
