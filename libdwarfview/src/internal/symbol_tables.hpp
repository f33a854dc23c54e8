#pragma once
// The symbol tables an elf_file reads (.symtab and .dynsym, or a separate debug file's
// .symtab), one entry at a time, and the symbols of one name found through a hash of every
// name: a lookup by name (a breakpoint's function, thread_db's and the loader's variables)
// builds a `symbol` only for the entries of that name, where elf_file::symbols() builds,
// sorts and deduplicates all of them (libc's separate .symtab alone holds 10,000).

#include "ompdbg/dwarf/elf_file.hpp"

#include "internal/elf_handle.hpp"
#include "internal/symbol_names.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <gelf.h>

namespace ompdbg::dwarf::internal {

/// One SHT_SYMTAB or SHT_DYNSYM section of an open file.
struct symbol_table {
    const elf_handle* file = nullptr;
    Elf_Data* data = nullptr;      ///< the entries (Elf64_Sym)
    std::size_t count = 0;         ///< entries, the null entry 0 included
    std::string_view strings;      ///< its string table (sh_link)
    bool dynsym = false;
    std::vector<section_kind> sections;   ///< what each section of `file` holds, by index
    // Where the table and its strings lie in `file` (what a cached index is keyed on).
    std::uint64_t offset = 0, size = 0, strings_offset = 0;

    /// Entry `i` as gdb's minimal symbols keep it, or nullopt for what they skip
    /// (undefined, section and file symbols, empty or unreadable names). The name loses
    /// its version suffix ("foo@@GLIBC_2.2.5" -> "foo").
    std::optional<symbol> at(std::size_t i) const;
    /// The name entry `i` would have, or an empty view when at(i) skips it.
    std::string_view name_at(std::size_t i) const;
};

/// The symbol tables of `h` in section order: both kinds, or only SHT_SYMTAB when
/// `only_symtab`. Tables whose contents lie outside the file are left out.
std::vector<symbol_table> read_symbol_tables(const elf_handle& h, bool only_symtab);

/// A hash table of the (unversioned) names of every entry the tables keep (symbol_names:
/// built in two passes, no sort, or read from the index cache).
class symbol_name_index {
public:
    /// Hashes every name of `tables`, whose key is `key`.
    symbol_name_index(std::vector<symbol_table> tables, const symbol_names_key& key);
    /// Uses `names`, a table built for these tables (parsed from the cache for their key).
    symbol_name_index(std::vector<symbol_table> tables, symbol_names names);

    /// The symbols named exactly `name`, as elf_file::symbols() holds them: ordered by
    /// value, .symtab before .dynsym, one per value (the first in the tables' order).
    std::vector<symbol> find(std::string_view name) const;

    /// The table, to be written to the cache; nullopt when the tables were too big for one
    /// (then find() answers nothing, as no real file's tables are).
    const std::optional<symbol_names>& names() const { return names_; }

private:
    std::vector<symbol_table> tables_;
    std::vector<std::size_t> first_;   ///< position of each table's entry 0
    std::optional<symbol_names> names_;
};

}  // namespace ompdbg::dwarf::internal
