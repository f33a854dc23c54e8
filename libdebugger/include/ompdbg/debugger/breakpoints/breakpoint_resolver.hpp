#pragma once
/// Turns a breakpoint spec as typed (`foo`, `file.c:12`, `12`, `*0x401000`) into
/// addresses: against every loaded module of the live process, or the program's ELF alone
/// before `run` (file addresses, as gdb shows them before the program starts).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger {

enum class spec_kind { function, file_line, line, address };

struct parsed_spec {
    spec_kind kind = spec_kind::function;
    std::string function;     ///< function
    std::string file;         ///< file_line (empty for `line`)
    int line = 0;
    std::string address_expr; ///< address (text after '*')
};

/// Splits `spec` (without any `if COND`). Throws for an empty spec.
parsed_spec parse_spec(const std::string& spec);

/// The locations of `spec` in the session's current modules; empty when nothing matches
/// (then `why` holds gdb's message: `Function "x" not defined.`, `No source file named
/// x.c.`, `No line 999 in file "x.c".`). Throws for an address expression that cannot be
/// evaluated.
std::vector<breakpoint_location> resolve_spec(session& s, const std::string& spec, std::string& why);

/// `spec` with a bare `LINE` bound to the file it means now ("FILE:LINE"), any other spec
/// unchanged. gdb binds a bare line to the default source file when the breakpoint is set;
/// re-resolving "83" later (after `run`, in ld.so's frame) would look in another file.
std::string bind_line_spec(session& s, const std::string& spec);

/// Re-resolves every breakpoint against the current modules (after launch, attach, a
/// library event) and plants/removes sites so that the process matches the enabled
/// locations. Reports pending breakpoints that became resolved.
void refresh_breakpoints(session& s, bool report_resolved);

/// Plants sites for every enabled location and removes the ones no longer wanted.
void sync_breakpoint_sites(session& s);

/// The user breakpoints (with the location index) that have an enabled location at
/// run-time address `addr`.
std::vector<std::pair<breakpoint*, std::size_t>> breakpoints_at(session& s, std::uint64_t addr);

}  // namespace ompdbg::debugger
