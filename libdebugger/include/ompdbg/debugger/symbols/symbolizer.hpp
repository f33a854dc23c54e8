#pragma once
/// Run-time address → "main+4" through the minimal symbols (.symtab/.dynsym) of the module
/// that maps it, as gdb labels addresses in `x`, `print` of code pointers and `info symbol`.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

class session;

struct symbolized {
    std::string name;                          ///< symbol name ("main", "global_array")
    std::uint64_t offset = 0;                  ///< addr - symbol start
    const tracer::loaded_module* module = nullptr;   ///< nullptr: the program's ELF (no process)
    std::string section;                       ///< ".text", ".data" ... (for `info symbol`)
    std::shared_ptr<dwarf::elf_file> elf;      ///< the file holding the symbol
    std::uint64_t file_addr = 0;               ///< the address in that file
};

/// The module that maps run-time address `addr` (with no process: the program, bias 0);
/// `elf` is null when no module covers it.
struct module_view {
    std::shared_ptr<dwarf::elf_file> elf;
    std::uint64_t bias = 0;   ///< run-time address - file address
    /// Its debug info, or nullptr when it has none.
    dwarf::debug_info* debug() const { return elf && elf->has_debug_info() ? elf->debug() : nullptr; }
};
module_view module_for(session& s, std::uint64_t addr);

/// The symbol containing run-time address `addr` (with no process: a file address of the
/// program). nullopt when no module or symbol covers it.
std::optional<symbolized> symbolize_address(session& s, std::uint64_t addr);
/// "main+4" / "global_counter", or "" when unknown (the <...> form is the caller's). Names stay
/// mangled, as gdb shows them where it prints addresses as an assembler would (x/a, x/i,
/// info line: `set print asm-demangle off`).
std::string symbol_label(session& s, std::uint64_t addr);
/// The label of a pointer value in `print` and `info registers` ("vtable for Circle+16",
/// "Circle::area() const+8", "main(int, char**)" in C++ code, "main+4" in C): minimal symbols
/// demangled, C++ functions with DWARF named by gdb's physname. "" when unknown.
std::string value_symbol_label(session& s, std::uint64_t addr);

/// gdb's name of the function instance `fn` (its symbol's print name, as `info breakpoints`
/// shows it): in a C unit the name ("factorial"); in a C++ unit the demangled linkage name
/// without a template's return type ("geometry::area(int)", "shape::area() const",
/// "largest<int>(int const*, int)"), else, without a linkage name, the name with its
/// parameter types for an out-of-line function ("main(int, char**)") and the bare name
/// for an inlined copy (gcc's static functions). Never throws.
std::string function_print_name(const dwarf::function& fn);

/// gdb's demangled form of a C++ symbol ("_ZNSo5flushEv" → "std::ostream::flush()",
/// "_ZTV6Circle" → "vtable for Circle"); any other name unchanged.
std::string demangle(const std::string& name);
/// gdb's physname of a demangled function name: the return type of a template function
/// dropped ("int twice<int>(int)" → "twice<int>(int)").
std::string drop_return_type(const std::string& demangled);

}  // namespace ompdbg::debugger
