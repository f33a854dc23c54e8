#pragma once
// Minimal ELF reading that libtracer needs before (and independently of) libdwarfview:
// the value of one symbol of the dynamic loader (`_dl_debug_state`, `_r_debug`).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace ompdbg::tracer::internal {

/// st_value of the first symbol named `name` in .dynsym or .symtab of `path` (version
/// suffixes ignored); nullopt when the file or the symbol is missing.
std::optional<std::uint64_t> elf_symbol_value(const std::filesystem::path& path, std::string_view name);

}  // namespace ompdbg::tracer::internal
