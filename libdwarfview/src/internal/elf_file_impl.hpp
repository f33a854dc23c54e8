#pragma once
// elf_file's reader state (elf_file::impl), shared by the files that implement elf_file:
// elf_file.cpp (headers, symbols, separate debug files) and elf_plt.cpp (PLT stubs and
// GOT slots).

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

#include "internal/elf_handle.hpp"
#include "internal/section_inflate.hpp"
#include "internal/symbol_tables.hpp"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfutils/libdw.h>
#include <gelf.h>

namespace ompdbg::dwarf {

using internal::elf_handle;

struct elf_file::impl {
    std::filesystem::path path;
    // Every elf_file that open() returns is a thin handle on one shared reader per file:
    // the processes of a session (MPI ranks of one executable, the same libc everywhere)
    // and every helper that opens the file read its symbols and index its DWARF once.
    std::shared_ptr<const elf_file> shared;
    elf_handle main;
    GElf_Ehdr ehdr{};
    std::optional<std::string> build_id;
    std::vector<section_info> sections;
    std::optional<tls_segment> tls;
    std::pair<std::uint64_t, std::uint64_t> load_range{0, 0};
    std::vector<load_segment> segments;
    bool text_relocations = false;

    // Symbols, read on first use.
    mutable std::once_flag symbols_once;
    mutable std::vector<symbol> symbols;
    mutable std::vector<std::size_t> by_name;   // indexes sorted by name
    mutable std::vector<std::size_t> by_addr;   // code/data symbols sorted by address
    mutable std::atomic<bool> symbols_loaded{false};

    // The symbol tables load_symbols reads: .symtab and .dynsym of the file, or the
    // separate debug file's .symtab when the file has none (as gdb reads it).
    mutable std::once_flag tables_once;
    mutable std::optional<elf_handle> symtab_file;   // separate debug file holding .symtab
    mutable std::vector<internal::symbol_table> tables;

    // Their names hashed, read from the index cache on the first lookup by name, else built
    // on the first lookup that the string tables cannot answer "no such symbol" to (attach
    // asks each module for the MPIR/MPI2DD names), and used until every symbol is read.
    mutable std::once_flag cached_names_once;
    mutable std::optional<internal::symbol_names_key> names_key;
    mutable std::once_flag names_once;
    mutable std::unique_ptr<internal::symbol_name_index> names;
    mutable std::atomic<bool> names_built{false};

    // GOT slot -> symbol name, from the dynamic relocations, read on first use.
    mutable std::once_flag got_once;
    mutable std::map<std::uint64_t, std::string> got_names;

    // PLT stubs by address ("name@plt"), read on first use.
    mutable std::once_flag plt_once;
    mutable std::map<std::uint64_t, symbol> plt_stubs;

    // DWARF, read on first use.
    mutable std::once_flag debug_once;
    mutable std::optional<elf_handle> debug_file;   // separate debug file, when used
    mutable internal::inflated_sections inflated;    // its compressed sections, inflated
    mutable std::optional<std::filesystem::path> debug_path;
    mutable Dwarf* dwarf = nullptr;
    mutable std::unique_ptr<debug_info> info;
    mutable std::atomic<bool> debug_loaded{false};   ///< debug()'s first call is over
    std::vector<std::filesystem::path> debug_dirs;

    mutable std::once_flag separate_once;
    mutable std::optional<std::filesystem::path> separate_path;
    // The separate debug file as the build-id check opened it, handed to the first reader
    // (symbol_tables or load_debug) instead of opening and mapping it a second time.
    mutable std::mutex separate_mutex;
    mutable std::optional<elf_handle> separate_handle;

    ~impl() {
        info.reset();
        if (dwarf != nullptr) {
            dwarf_end(dwarf);
        }
    }

    void read_headers(const std::filesystem::path& p);
    const std::vector<internal::symbol_table>& symbol_tables() const;
    void load_symbols() const;
    bool strtabs_may_name(std::string_view name) const;
    bool names_from_cache() const;
    std::vector<symbol> find_by_name_index(std::string_view name) const;
    static bool file_crc32_matches(const std::filesystem::path& p, std::uint32_t crc);
    void load_debug() const;
    /// may_define_function before the DWARF is opened.
    bool unopened_dwarf_may_define(std::string_view leaf) const;
    const std::optional<std::filesystem::path>& find_separate_debug_file() const;
    std::optional<elf_handle> open_separate_debug_file() const;
};

}  // namespace ompdbg::dwarf

// Handles forward to the shared reader (impl::shared); the reader itself has none.
#define OMPDBG_FORWARD(call) \
    if (impl_->shared) return impl_->shared->call
