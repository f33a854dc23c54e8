#pragma once
// The symbol tables an elf_file reads (.symtab and .dynsym, or a separate debug file's
// .symtab), one entry at a time, and the symbols of one name found through a hash of every
// name: a lookup by name (a breakpoint's function, thread_db's and the loader's variables)
// builds a `symbol` only for the entries of that name, where elf_file::symbols() builds,
// sorts and deduplicates all of them (libc's separate .symtab alone holds 10,000).

#include "ompdbg/dwarf/elf_file.hpp"

#include "internal/elf_handle.hpp"

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

/// A hash table of the (unversioned) names of every entry the tables keep, built in two
/// passes (no sort).
class symbol_name_index {
public:
    explicit symbol_name_index(std::vector<symbol_table> tables);

    /// The symbols named exactly `name`, as elf_file::symbols() holds them: ordered by
    /// value, .symtab before .dynsym, one per value (the first in the tables' order).
    std::vector<symbol> find(std::string_view name) const;

private:
    std::vector<symbol_table> tables_;
    std::vector<std::size_t> first_;   ///< position of each table's entry 0
    // The positions (tables in order, entries in order) of the kept entries grouped by
    // bucket (hash & mask_), in the tables' order within a bucket; bucket b holds
    // positions_[starts_[b]] up to positions_[starts_[b + 1]].
    std::uint32_t mask_ = 0;
    std::vector<std::uint32_t> starts_;
    std::vector<std::uint32_t> hashes_;
    std::vector<std::uint32_t> positions_;
};

}  // namespace ompdbg::dwarf::internal
