#pragma once
/// The DMPL views of variables (issue 5, moved from the CLI by issue 19): `info locals` of
/// an outlined OpenMP region (the user's variables by source name, with the data-sharing
/// the DMPL library's demangling, the DWARF locations and the routine's code tell), and each
/// thread's copy of a threadprivate variable. The front ends print these structs; the DMPL
/// library's calls and codes stay here.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::debugger {

class session;

/// What a variable's DW_AT_location says about where it lives.
struct location_facts {
    bool tls = false;    ///< DW_OP_form_tls_address / DW_OP_GNU_push_tls_address
    bool deref = false;  ///< DW_OP_deref: reached through a pointer (gcc's .omp_data_i)
    /// One expression for the whole scope (not a location list, not absent): where the
    /// variable lives can tell how the region shares it.
    bool single = false;
};

/// The location_facts of `v` (all false without a location).
location_facts facts_of(const dwarf::variable& v);

/// One variable of an outlined region as `info locals` shows it.
struct outlined_local {
    std::string name;     ///< the user's name (DMPL's demangling), else the DWARF name
    std::string value;    ///< formatted as gdb's print, or "<error: ...>"
    std::string scoping;  ///< "private", "shared", ...; empty when nothing tells
};

/// The variables of the selected frame when it runs an outlined OpenMP routine (the DMPL
/// library demangles its name); nullopt when it does not (the ordinary `info locals`
/// applies). Locals first, then parameters, as gdb orders them.
std::optional<std::vector<outlined_local>> outlined_region_locals(session& s);

/// One thread's copy of a threadprivate variable.
struct threadprivate_copy {
    pid_t tid = 0;
    std::string omp_thread;  ///< OpenMP thread number, "-" when unknown
    std::string address;     ///< "0x..." of the copy; empty when the value is an error
    std::string value;       ///< formatted, or "<not allocated yet (...)>" / "<error: ...>"
};

/// Each live thread's copy of global variable `name` (`omp threadprivate NAME`): thread-local
/// storage, or the OpenMP runtime's per-thread copy through DMPL. Throws ompdbg::error with
/// gdb's line without a target or symbol, and when the variable is not threadprivate.
std::vector<threadprivate_copy> threadprivate_copies(session& s, const std::string& name);

}  // namespace ompdbg::debugger
