#pragma once
/// Run-time address → "main+4" through the minimal symbols (.symtab/.dynsym) of the module
/// that maps it, as gdb labels addresses in `x`, `print` of code pointers and `info symbol`.

#include <cstdint>
#include <optional>
#include <string>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::app {

class session;

struct symbolized {
    std::string name;                          ///< symbol name ("main", "global_array")
    std::uint64_t offset = 0;                  ///< addr - symbol start
    const tracer::loaded_module* module = nullptr;   ///< nullptr: the program's ELF (no process)
    std::string section;                       ///< ".text", ".data" ... (for `info symbol`)
};

/// The symbol containing run-time address `addr` (with no process: a file address of the
/// program). nullopt when no module or symbol covers it.
std::optional<symbolized> symbolize_address(session& s, std::uint64_t addr);
/// "main+4" / "global_counter", or "" when unknown (the <...> form is the caller's).
std::string symbol_label(session& s, std::uint64_t addr);

}  // namespace ompdbg::app
