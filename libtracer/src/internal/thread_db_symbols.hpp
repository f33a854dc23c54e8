#pragma once
// The defined symbols of an ELF file's .dynsym and .symtab, by name (file addresses), read
// with plain pread: what libthread_db's ps_pglobal_lookup needs (nptl's `_thread_db_*`
// descriptors and `__nptl_version` in libc.so.6, `_rtld_global` in ld.so, all exported).
// Used when a module has no dwarf::elf_file attached.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>

namespace ompdbg::tracer::detail {

class symbol_table {
public:
    /// Reads the symbol tables of `path`; an unreadable or non-ELF file gives an empty table.
    explicit symbol_table(const std::filesystem::path& path);
    /// File address (st_value) of the defined symbol `name`.
    std::optional<std::uint64_t> find(const std::string& name) const;

private:
    std::unordered_map<std::string, std::uint64_t> symbols_;
};

}  // namespace ompdbg::tracer::detail
