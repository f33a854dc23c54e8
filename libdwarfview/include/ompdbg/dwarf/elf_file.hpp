#pragma once
/// An ELF file on disk: symbols, sections, build-id and (lazily) its DWARF. One elf_file is
/// shared by every process that maps the file. Addresses here are file (link-time) addresses.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::dwarf {

class debug_info;

enum class symbol_kind { function, object, tls, ifunc, other };

/// What the section of a symbol holds, as gdb sorts minimal symbols into functions (code)
/// and variables (data, bss, absolute).
enum class section_kind { code, data, other };

struct symbol {
    std::string name;        ///< without a version suffix ("foo@@GLIBC_2.2.5" → "foo")
    std::uint64_t value;     ///< file address (st_value); for TLS symbols, offset in PT_TLS
    std::uint64_t size;
    symbol_kind kind;
    bool is_global;          ///< STB_GLOBAL or STB_WEAK
    bool from_dynsym;
    section_kind section;    ///< SHF_EXECINSTR: code; other SHF_ALLOC or SHN_ABS: data
};

struct section_info {
    std::string name;
    std::uint64_t addr;      ///< sh_addr
    std::uint64_t offset;    ///< sh_offset
    std::uint64_t size;
};

struct tls_segment {
    std::uint64_t vaddr, filesz, memsz, align;
};

/// One PT_LOAD segment: file addresses [vaddr, vaddr + memsz), of which the first filesz
/// bytes come from the file.
struct load_segment {
    std::uint64_t vaddr = 0, filesz = 0, memsz = 0;
    bool is_writable = false;   ///< PF_W
};

class elf_file {
public:
    /// Opens and validates `path`. Throws ompdbg::error:
    ///   "<path>: No such file or directory", "<path>: Permission denied",
    ///   "\"<path>\": not in executable format: file format not recognized",
    ///   and a one-line error for truncated or corrupt files (never crashes).
    static std::unique_ptr<elf_file> open(const std::filesystem::path& path);
    ~elf_file();
    elf_file(const elf_file&) = delete;
    elf_file& operator=(const elf_file&) = delete;

    const std::filesystem::path& path() const;
    std::optional<std::string> build_id() const;   ///< lowercase hex
    bool is_pie() const;                             ///< ET_DYN
    std::uint64_t entry() const;

    /// All symbols of .symtab and .dynsym (locals included), deduplicated.
    const std::vector<symbol>& symbols() const;
    /// Symbols named exactly `name` (version suffixes ignored).
    std::vector<symbol> find_symbols(std::string_view name) const;
    /// The function or object symbol containing `addr` (the closest preceding one when
    /// sizes are 0, as gdb's minimal symbols do).
    std::optional<symbol> symbol_at(std::uint64_t addr) const;

    /// The function whose address the dynamic linker writes into the GOT slot at file
    /// address `slot` (an R_X86_64_JUMP_SLOT or GLOB_DAT relocation): what a PLT stub or a
    /// `call *slot(%rip)` reaching through that slot calls, bound yet or not.
    std::optional<std::string> got_slot_symbol(std::uint64_t slot) const;
    /// The PLT stub containing file address `addr` as gdb names it ("puts@plt", a function
    /// symbol of the stub's size), found from the GOT slot its `jmp *slot(%rip)` reads;
    /// nullopt outside .plt, .plt.sec and .plt.got or for the resolver entry.
    std::optional<symbol> plt_symbol_at(std::uint64_t addr) const;
    /// Every PLT stub plt_symbol_at names, by address.
    std::vector<symbol> plt_symbols() const;

    std::optional<section_info> section(std::string_view name) const;
    std::optional<tls_segment> tls() const;
    /// Bytes of the file's loaded contents at file address `addr` (from the section holding
    /// it); fewer or none when the range leaves the section or it has no file contents.
    std::vector<std::byte> read_bytes(std::uint64_t addr, std::size_t size) const;
    /// The address after the frame set-up at function entry `entry` (an optional endbr64,
    /// then push %rbp; mov %rsp,%rbp in either encoding), as gdb's amd64_analyze_prologue
    /// finds it; nullopt when the function sets up no frame there (gdb then stays at entry).
    std::optional<std::uint64_t> frame_setup_end(std::uint64_t entry) const;
    /// Lowest and highest+1 file address of the PT_LOAD segments.
    std::pair<std::uint64_t, std::uint64_t> load_range() const;
    /// The PT_LOAD segments, in file order.
    const std::vector<load_segment>& load_segments() const;
    /// Whether the dynamic linker writes into read-only segments when it loads the file
    /// (DT_TEXTREL, DF_TEXTREL): then they differ in memory from the file.
    bool has_text_relocations() const;

    /// True when DWARF is available here or in a separate debug file.
    bool has_debug_info() const;
    /// The DWARF of this file, loaded on first use (from the file itself or a separate debug
    /// file found by build-id / .gnu_debuglink); nullptr when there is none.
    debug_info* debug() const;
    /// False when this file's DWARF certainly holds no function `name` (as debug()->
    /// find_functions looks it up), known without opening the DWARF: the index cache's table
    /// of its units says so. True otherwise (then ask find_functions). Resolving `break f`
    /// again at every solib event thus skips opening libc's DWARF for a name it lacks.
    bool may_define_function(std::string_view name) const;
    /// Where the DWARF came from, when it is a separate file.
    std::optional<std::filesystem::path> debug_file_path() const;

    /// Global debug-file directories searched for separate debug files (gdb's
    /// `debug-file-directory`), default {"/usr/lib/debug"}. Affects files opened later.
    static void set_debug_file_directories(std::vector<std::filesystem::path> dirs);
    static std::vector<std::filesystem::path> debug_file_directories();

private:
    elf_file();
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::dwarf
