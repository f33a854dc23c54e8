#include "ompdbg/dwarf/elf_file.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/debug_info.hpp"

#include "internal/elf_file_impl.hpp"
#include "internal/elf_handle.hpp"
#include "internal/index_cache_io.hpp"
#include "internal/name_filter.hpp"
#include "internal/section_inflate.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <system_error>

#include <sys/stat.h>

#include <fmt/format.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

namespace ompdbg::dwarf {

namespace fs = std::filesystem;
using internal::elf_handle;

namespace {

std::mutex& dirs_mutex() {
    static std::mutex m;
    return m;
}

std::vector<fs::path>& dirs_storage() {
    static std::vector<fs::path> dirs{"/usr/lib/debug"};
    return dirs;
}

std::string hex(const unsigned char* p, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

std::optional<std::string> read_build_id(Elf* elf) {
    const void* id = nullptr;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    if (n <= 0 || id == nullptr) {
        return std::nullopt;
    }
    return hex(static_cast<const unsigned char*>(id), static_cast<std::size_t>(n));
}

// A section with real DWARF in it (a stripped file keeps no .debug_info; a separate debug
// file keeps every section but makes the code ones NOBITS).
bool has_dwarf_sections(const elf_handle& h) {
    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(h.get(), &shstrndx) != 0) {
        return false;
    }
    for (Elf_Scn* scn = elf_nextscn(h.get(), nullptr); scn; scn = elf_nextscn(h.get(), scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) {
            continue;
        }
        const char* name = elf_strptr(h.get(), shstrndx, shdr.sh_name);
        if (name && (std::string_view(name) == ".debug_info" ||
                     std::string_view(name) == ".zdebug_info") &&
            shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0 && h.section_in_bounds(shdr)) {
            return true;
        }
    }
    return false;
}

}  // namespace

elf_file::elf_file() : impl_(std::make_unique<impl>()) {}
elf_file::~elf_file() = default;

void elf_file::set_debug_file_directories(std::vector<fs::path> dirs) {
    std::lock_guard lock(dirs_mutex());
    dirs_storage() = std::move(dirs);
}

std::vector<fs::path> elf_file::debug_file_directories() {
    std::lock_guard lock(dirs_mutex());
    return dirs_storage();
}

namespace {

// Identifies one version of one file opened with one set of debug-file directories; empty
// when the file cannot be stat'ed (open then reports why).
std::optional<std::string> share_key(const fs::path& path, const std::vector<fs::path>& dirs) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    std::string key = fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size,
                                  st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    for (auto& d : dirs) {
        key += '\0' + d.string();
    }
    return key;
}

std::mutex& shared_mutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, std::weak_ptr<const elf_file>>& shared_files() {
    static std::map<std::string, std::weak_ptr<const elf_file>> files;
    return files;
}

}  // namespace

std::unique_ptr<elf_file> elf_file::open(const fs::path& path) {
    auto key = share_key(path, debug_file_directories());
    std::shared_ptr<const elf_file> core;
    if (key) {
        std::lock_guard lock(shared_mutex());
        if (auto it = shared_files().find(*key); it != shared_files().end()) {
            core = it->second.lock();
        }
    }
    if (!core) {
        std::shared_ptr<elf_file> fresh(new elf_file());
        fresh->impl_->read_headers(path);
        core = fresh;
        if (key) {
            std::lock_guard lock(shared_mutex());
            auto& files = shared_files();
            std::erase_if(files, [](const auto& kv) { return kv.second.expired(); });
            auto& slot = files[*key];
            if (auto other = slot.lock()) {
                core = other;   // another thread opened it meanwhile
            } else {
                slot = core;
            }
        }
    }
    std::unique_ptr<elf_file> f(new elf_file());
    f->impl_->path = path;
    f->impl_->shared = std::move(core);
    return f;
}

namespace {

// Whether the dynamic section `scn` asks the loader to relocate read-only segments.
bool has_textrel(Elf_Scn* scn, const GElf_Shdr& shdr) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) {
        return false;
    }
    for (std::size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
        GElf_Dyn dyn;
        if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL) {
            break;
        }
        if (dyn.d_tag == DT_TEXTREL || (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_TEXTREL))) {
            return true;
        }
    }
    return false;
}

}  // namespace

void elf_file::impl::read_headers(const fs::path& p) {
    impl& d = *this;
    d.path = p;
    const fs::path& path = p;
    d.main = elf_handle::open(path);
    d.debug_dirs = debug_file_directories();
    Elf* elf = d.main.get();
    gelf_getehdr(elf, &d.ehdr);   // validated by elf_handle::open
    d.build_id = read_build_id(elf);

    std::size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) == 0) {
        bool first = true;
        for (std::size_t i = 0; i < phnum; ++i) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr) {
                continue;
            }
            if (ph.p_type == PT_LOAD) {
                d.segments.push_back(load_segment{ph.p_vaddr, ph.p_filesz, ph.p_memsz, (ph.p_flags & PF_W) != 0});
                std::uint64_t lo = ph.p_vaddr, hi = ph.p_vaddr + ph.p_memsz;
                if (first) {
                    d.load_range = {lo, hi};
                    first = false;
                } else {
                    d.load_range.first = std::min(d.load_range.first, lo);
                    d.load_range.second = std::max(d.load_range.second, hi);
                }
            } else if (ph.p_type == PT_TLS) {
                d.tls = tls_segment{ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_align};
            }
        }
    }

    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
        for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr shdr;
            if (gelf_getshdr(scn, &shdr) == nullptr) {
                continue;
            }
            const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
            d.sections.push_back(section_info{name ? name : "", shdr.sh_addr, shdr.sh_offset,
                                              shdr.sh_size});
            if (shdr.sh_type == SHT_DYNAMIC && d.main.section_in_bounds(shdr)) {
                d.text_relocations = d.text_relocations || has_textrel(scn, shdr);
            }
        }
    }
    log::write(log::channel::dwarf, "opened {} ({} sections)", path.string(), d.sections.size());
}

const fs::path& elf_file::path() const { return impl_->path; }
std::optional<std::string> elf_file::build_id() const {
    OMPDBG_FORWARD(build_id());
    return impl_->build_id;
}
bool elf_file::is_pie() const {
    OMPDBG_FORWARD(is_pie());
    return impl_->ehdr.e_type == ET_DYN;
}
std::uint64_t elf_file::entry() const {
    OMPDBG_FORWARD(entry());
    return impl_->ehdr.e_entry;
}
std::optional<tls_segment> elf_file::tls() const {
    OMPDBG_FORWARD(tls());
    return impl_->tls;
}
std::pair<std::uint64_t, std::uint64_t> elf_file::load_range() const {
    OMPDBG_FORWARD(load_range());
    return impl_->load_range;
}

const std::vector<load_segment>& elf_file::load_segments() const {
    OMPDBG_FORWARD(load_segments());
    return impl_->segments;
}

bool elf_file::has_text_relocations() const {
    OMPDBG_FORWARD(has_text_relocations());
    return impl_->text_relocations;
}

std::optional<section_info> elf_file::section(std::string_view name) const {
    OMPDBG_FORWARD(section(name));
    for (auto& s : impl_->sections) {
        if (s.name == name) {
            return s;
        }
    }
    return std::nullopt;
}

// The tables are read once and kept open: a lookup by name reads them in place.
const std::vector<internal::symbol_table>& elf_file::impl::symbol_tables() const {
    std::call_once(tables_once, [&] {
        tables = internal::read_symbol_tables(main, false);
        bool have_symtab = std::any_of(tables.begin(), tables.end(), [](const auto& t) { return !t.dynsym; });
        // A stripped file whose separate debug file still has the full .symtab (objcopy
        // --only-keep-debug keeps it), as gdb reads it.
        if (!have_symtab) {
            if (find_separate_debug_file()) {
                symtab_file = open_separate_debug_file();
                if (symtab_file) {
                    for (auto& t : internal::read_symbol_tables(*symtab_file, true)) {
                        tables.push_back(std::move(t));
                    }
                }
            }
        }
    });
    return tables;
}

void elf_file::impl::load_symbols() const {
    for (const auto& t : symbol_tables()) {
        symbols.reserve(symbols.size() + t.count);
        for (std::size_t i = 1; i < t.count; ++i) {
            if (auto sym = t.at(i)) {
                symbols.push_back(std::move(*sym));
            }
        }
    }
    // Deduplicate (the same symbol is usually in .symtab and .dynsym); prefer .symtab.
    std::stable_sort(symbols.begin(), symbols.end(), [](const symbol& a, const symbol& b) {
        if (a.name != b.name) return a.name < b.name;
        if (a.value != b.value) return a.value < b.value;
        return a.from_dynsym < b.from_dynsym;
    });
    symbols.erase(std::unique(symbols.begin(), symbols.end(),
                              [](const symbol& a, const symbol& b) {
                                  return a.name == b.name && a.value == b.value;
                              }),
                  symbols.end());
    by_name.resize(symbols.size());
    for (std::size_t i = 0; i < symbols.size(); ++i) {
        by_name[i] = i;
        const symbol& s = symbols[i];
        if ((s.kind == symbol_kind::function || s.kind == symbol_kind::object ||
             s.kind == symbol_kind::ifunc || s.kind == symbol_kind::other) &&
            s.value != 0) {
            by_addr.push_back(i);
        }
    }
    // By address; at one address prefer functions, then sized, then global symbols (gdb
    // prefers global minimal symbols over static ones at the same address).
    auto rank = [&](const symbol& s) {
        int r = 0;
        if (s.kind == symbol_kind::function || s.kind == symbol_kind::ifunc) r += 4;
        else if (s.kind == symbol_kind::object) r += 2;
        if (s.is_global) r += 1;
        return r;
    };
    std::stable_sort(by_addr.begin(), by_addr.end(), [&](std::size_t a, std::size_t b) {
        const symbol& x = symbols[a];
        const symbol& y = symbols[b];
        if (x.value != y.value) return x.value < y.value;
        return rank(x) < rank(y);   // best last
    });
}

const std::vector<symbol>& elf_file::symbols() const {
    OMPDBG_FORWARD(symbols());
    std::call_once(impl_->symbols_once, [&] {
        impl_->load_symbols();
        impl_->symbols_loaded.store(true, std::memory_order_release);
    });
    return impl_->symbols;
}

// False only when no string table of the symbol tables holds the bytes "name\0" or
// "name@" (a versioned name): then no symbol has that name, and a file that does not name
// it is passed over without hashing its names.
bool elf_file::impl::strtabs_may_name(std::string_view name) const {
    if (name.empty()) {
        return true;
    }
    std::string whole(name);
    whole += '\0';
    std::string versioned(name);
    versioned += '@';
    // A linker may share a name's tail with a longer one ("foo" inside "barfoo"): look
    // for the bytes anywhere, a false "maybe" costs only the full read.
    for (const auto& t : symbol_tables()) {
        for (const std::string& needle : {whole, versioned}) {
            if (::memmem(t.strings.data(), t.strings.size(), needle.data(), needle.size()) != nullptr) {
                return true;
            }
        }
    }
    return false;
}

std::vector<symbol> elf_file::find_symbols(std::string_view name) const {
    OMPDBG_FORWARD(find_symbols(name));
    if (auto at = name.find('@'); at != std::string_view::npos && at > 0) {
        name = name.substr(0, at);
    }
    if (!impl_->symbols_loaded.load(std::memory_order_acquire)) {
        if (!impl_->names_built.load(std::memory_order_acquire) && !impl_->names_from_cache() &&
            !impl_->strtabs_may_name(name)) {
            return {};
        }
        return impl_->find_by_name_index(name);
    }
    const auto& syms = symbols();
    std::vector<symbol> out;
    auto it = std::lower_bound(impl_->by_name.begin(), impl_->by_name.end(), name,
                               [&](std::size_t i, std::string_view n) { return syms[i].name < n; });
    for (; it != impl_->by_name.end() && syms[*it].name == name; ++it) {
        out.push_back(syms[*it]);
    }
    return out;
}

// The hash of the names as a previous session wrote it to the index cache, read on the
// first lookup by name: true when it was there (then no lookup reads the string tables to
// answer "no such symbol", and none hashes them).
bool elf_file::impl::names_from_cache() const {
    std::call_once(cached_names_once, [&] {
        const auto& t = symbol_tables();
        names_key = internal::symbol_names_key::of(t, main, build_id.value_or(""));
        if (auto table = internal::load_symbol_names(*names_key)) {
            names = std::make_unique<internal::symbol_name_index>(t, std::move(*table));
            names_built.store(true, std::memory_order_release);
        }
    });
    return names_built.load(std::memory_order_acquire);
}

// Until every symbol is read (symbols(), symbol_at), a lookup by name builds only the
// symbols of that name, through a hash of the names read from the cache or built (and then
// written to the cache) on the first lookup.
std::vector<symbol> elf_file::impl::find_by_name_index(std::string_view name) const {
    names_from_cache();
    std::call_once(names_once, [&] {
        if (names) {
            return;
        }
        names = std::make_unique<internal::symbol_name_index>(symbol_tables(), *names_key);
        if (names->names()) {
            internal::store_symbol_names(*names->names(), *names_key);
        }
        names_built.store(true, std::memory_order_release);
    });
    return names->find(name);
}

std::optional<symbol> elf_file::symbol_at(std::uint64_t addr) const {
    OMPDBG_FORWARD(symbol_at(addr));
    const auto& syms = symbols();
    const auto& idx = impl_->by_addr;
    auto it = std::upper_bound(idx.begin(), idx.end(), addr,
                               [&](std::uint64_t a, std::size_t i) { return a < syms[i].value; });
    // Walk back from the last symbol at or below addr: the first sized symbol containing
    // addr wins; else the nearest one when it has no size (hand-written assembly) and
    // lies in the same section as addr.
    std::optional<symbol> nearest_unsized;
    bool first = true;
    while (it != idx.begin()) {
        --it;
        const symbol& s = syms[*it];
        if (s.size > 0 && addr < s.value + s.size) {
            return s;
        }
        if (first) {
            if (s.size == 0) {
                nearest_unsized = s;
            }
            first = false;
        }
        // Symbols far below cannot contain addr unless they are huge; stop there.
        if (addr - s.value > (1ull << 24)) {
            break;
        }
    }
    if (nearest_unsized) {
        for (auto& sec : impl_->sections) {
            if (sec.addr != 0 && nearest_unsized->value >= sec.addr &&
                nearest_unsized->value < sec.addr + sec.size) {
                if (addr < sec.addr + sec.size) {
                    return nearest_unsized;
                }
                break;
            }
        }
    }
    return std::nullopt;
}

// gdb's order: build-id under each debug-file directory, then .gnu_debuglink in the
// file's directory, its .debug/ subdirectory and <debug-dir>/<file's dir>/. Debuglink
// candidates must match the CRC stored in the link.
const std::optional<fs::path>& elf_file::impl::find_separate_debug_file() const {
    std::call_once(separate_once, [&] {
        if (build_id && build_id->size() > 2) {
            for (auto& dir : debug_dirs) {
                fs::path p = dir / ".build-id" / build_id->substr(0, 2) /
                             (build_id->substr(2) + ".debug");
                std::error_code ec;
                if (fs::exists(p, ec) && fs::equivalent(p, path, ec) == false) {
                    if (auto h = elf_handle::try_open(p)) {
                        if (read_build_id(h->get()) == build_id) {
                            separate_path = p;
                            std::lock_guard lock(separate_mutex);
                            separate_handle = std::move(h);
                            return;
                        }
                    }
                }
            }
        }
        GElf_Word crc = 0;
        const char* link = dwelf_elf_gnu_debuglink(main.get(), &crc);
        if (link == nullptr || *link == '\0') {
            return;
        }
        std::error_code ec;
        fs::path abs = fs::absolute(path, ec);
        fs::path dir = abs.parent_path();
        std::vector<fs::path> candidates{dir / link, dir / ".debug" / link};
        for (auto& d : debug_dirs) {
            candidates.push_back(d / dir.relative_path() / link);
        }
        for (auto& c : candidates) {
            if (!fs::is_regular_file(c, ec) || fs::equivalent(c, abs, ec)) {
                continue;
            }
            if (file_crc32_matches(c, crc)) {
                separate_path = c;
                return;
            }
            log::write(log::channel::dwarf, "{}: CRC mismatch, ignored", c.string());
        }
    });
    return separate_path;
}

// The separate debug file open: the handle its build-id check left, the first time, else
// opened again (the symbol tables and the DWARF each keep their own).
std::optional<elf_handle> elf_file::impl::open_separate_debug_file() const {
    auto& sep = find_separate_debug_file();
    if (!sep) {
        return std::nullopt;
    }
    {
        std::lock_guard lock(separate_mutex);
        if (separate_handle) {
            std::optional<elf_handle> h = std::move(separate_handle);
            separate_handle.reset();
            return h;
        }
    }
    return elf_handle::try_open(*sep);
}

bool elf_file::impl::file_crc32_matches(const fs::path& p, std::uint32_t crc) {
    auto got = internal::file_crc32(p);
    return got && *got == crc;
}

void elf_file::impl::load_debug() const {
    if (has_dwarf_sections(main)) {
        inflated.inflate(main, build_id);
        dwarf = dwarf_begin_elf(main.get(), DWARF_C_READ, nullptr);
    }
    if (dwarf == nullptr) {
        if (auto& sep = find_separate_debug_file()) {
            debug_file = open_separate_debug_file();
            if (debug_file && has_dwarf_sections(*debug_file)) {
                inflated.inflate(*debug_file, read_build_id(debug_file->get()));
                dwarf = dwarf_begin_elf(debug_file->get(), DWARF_C_READ, nullptr);
                if (dwarf != nullptr) {
                    debug_path = *sep;
                }
            }
        }
    }
    if (dwarf == nullptr) {
        log::write(log::channel::dwarf, "{}: no DWARF", path.string());
    }
}

bool elf_file::has_debug_info() const { return debug() != nullptr; }

bool elf_file::may_define_function(std::string_view name) const {
    OMPDBG_FORWARD(may_define_function(name));
    if (impl_->debug_loaded.load()) {
        return true;   // find_functions answers as fast
    }
    std::string leaf = internal::leaf_of(internal::parse_function_query(name).name);
    return leaf.empty() || impl_->unopened_dwarf_may_define(leaf);
}

// The file holding the DWARF is read as ELF only (its section headers, the build-id note):
// the separate debug file's handle is the one its build-id check opened, left for load_debug.
bool elf_file::impl::unopened_dwarf_may_define(std::string_view leaf) const {
    if (has_dwarf_sections(main)) {
        return internal::unit_names_may_name(main.get(), leaf).value_or(true);
    }
    if (!find_separate_debug_file()) {
        return true;   // no DWARF: debug() says so at once
    }
    std::lock_guard lock(separate_mutex);
    if (!separate_handle) {
        separate_handle = elf_handle::try_open(*separate_path);
    }
    if (!separate_handle || !has_dwarf_sections(*separate_handle)) {
        return true;
    }
    return internal::unit_names_may_name(separate_handle->get(), leaf).value_or(true);
}

debug_info* elf_file::debug() const {
    OMPDBG_FORWARD(debug());
    std::call_once(impl_->debug_once, [&] {
        impl_->load_debug();
        if (impl_->dwarf != nullptr) {
            impl_->info = std::make_unique<debug_info>(*this, impl_->dwarf);
        }
        impl_->debug_loaded.store(true);
    });
    return impl_->info.get();
}

std::optional<fs::path> elf_file::debug_file_path() const {
    OMPDBG_FORWARD(debug_file_path());
    debug();
    return impl_->debug_path;
}

}  // namespace ompdbg::dwarf

namespace ompdbg::dwarf {

std::vector<std::byte> elf_file::read_bytes(std::uint64_t addr, std::size_t size) const {
    OMPDBG_FORWARD(read_bytes(addr, size));
    Elf* elf = impl_->main.get();
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr || !(shdr.sh_flags & SHF_ALLOC) ||
            shdr.sh_type == SHT_NOBITS || addr < shdr.sh_addr ||
            addr >= shdr.sh_addr + shdr.sh_size || !impl_->main.section_in_bounds(shdr)) {
            continue;
        }
        Elf_Data* data = elf_rawdata(scn, nullptr);
        if (data == nullptr || data->d_buf == nullptr) {
            return {};
        }
        std::uint64_t off = addr - shdr.sh_addr;
        std::size_t n = std::min<std::uint64_t>(size, data->d_size > off ? data->d_size - off : 0);
        auto* p = static_cast<const std::byte*>(data->d_buf) + off;
        return std::vector<std::byte>(p, p + n);
    }
    return {};
}

// Only the 64-bit forms: gdb matches movl %esp,%ebp for x32 alone, and a push %rbp with
// no move after it is a frameless function to gdb (it stays at the entry).
std::optional<std::uint64_t> elf_file::frame_setup_end(std::uint64_t entry) const {
    auto bytes = read_bytes(entry, 8);
    auto byte = [&](std::size_t i) { return i < bytes.size() ? std::to_integer<unsigned>(bytes[i]) : 0x100u; };
    std::size_t i = 0;
    if (byte(0) == 0xf3 && byte(1) == 0x0f && byte(2) == 0x1e && byte(3) == 0xfa) {
        i = 4;   // endbr64
    }
    if (byte(i) != 0x55 || byte(i + 1) != 0x48 ||
        !((byte(i + 2) == 0x89 && byte(i + 3) == 0xe5) || (byte(i + 2) == 0x8b && byte(i + 3) == 0xec))) {
        return std::nullopt;
    }
    return entry + i + 4;
}

#undef OMPDBG_FORWARD

}  // namespace ompdbg::dwarf
