#include "internal/symbol_tables.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <elf.h>

namespace ompdbg::dwarf::internal {

namespace {

symbol_kind kind_of(unsigned char type) {
    switch (type) {
    case STT_FUNC: return symbol_kind::function;
    case STT_OBJECT: return symbol_kind::object;
    case STT_TLS: return symbol_kind::tls;
    case STT_GNU_IFUNC: return symbol_kind::ifunc;
    default: return symbol_kind::other;
    }
}

// What each section of `h` holds, as gdb sorts minimal symbols: code (SHF_EXECINSTR),
// data (other SHF_ALLOC) or other; by section index.
std::vector<section_kind> section_kinds(const elf_handle& h) {
    std::vector<section_kind> kinds;
    std::size_t n = 0;
    if (elf_getshdrnum(h.get(), &n) != 0) {
        return kinds;
    }
    kinds.resize(std::min<std::size_t>(n, SHN_LORESERVE), section_kind::other);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        GElf_Shdr sec;
        Elf_Scn* s = elf_getscn(h.get(), i);
        if (s != nullptr && gelf_getshdr(s, &sec) != nullptr && (sec.sh_flags & SHF_ALLOC) != 0) {
            kinds[i] = (sec.sh_flags & SHF_EXECINSTR) != 0 ? section_kind::code : section_kind::data;
        }
    }
    return kinds;
}

}  // namespace

std::vector<symbol_table> read_symbol_tables(const elf_handle& h, bool only_symtab) {
    std::vector<symbol_table> out;
    std::vector<section_kind> kinds;
    for (Elf_Scn* scn = elf_nextscn(h.get(), nullptr); scn; scn = elf_nextscn(h.get(), scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr ||
            !(shdr.sh_type == SHT_SYMTAB || (shdr.sh_type == SHT_DYNSYM && !only_symtab)) ||
            !h.section_in_bounds(shdr) || shdr.sh_entsize == 0) {
            continue;
        }
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (data == nullptr || data->d_buf == nullptr) {
            continue;
        }
        symbol_table t;
        t.file = &h;
        t.data = data;
        t.count = std::min<std::size_t>(shdr.sh_size / shdr.sh_entsize, data->d_size / sizeof(Elf64_Sym));
        t.dynsym = shdr.sh_type == SHT_DYNSYM;
        t.offset = shdr.sh_offset;
        t.size = shdr.sh_size;
        Elf_Scn* str = elf_getscn(h.get(), shdr.sh_link);
        GElf_Shdr str_shdr;
        if (str != nullptr && gelf_getshdr(str, &str_shdr) != nullptr && str_shdr.sh_type == SHT_STRTAB &&
            h.section_in_bounds(str_shdr)) {
            if (Elf_Data* s = elf_getdata(str, nullptr); s != nullptr && s->d_buf != nullptr) {
                t.strings_offset = str_shdr.sh_offset;
                t.strings = std::string_view(static_cast<const char*>(s->d_buf), s->d_size);
            }
        }
        if (kinds.empty()) {
            kinds = section_kinds(h);
        }
        t.sections = kinds;
        out.push_back(std::move(t));
    }
    return out;
}

std::string_view symbol_table::name_at(std::size_t i) const {
    if (i == 0 || i >= count) {
        return {};
    }
    Elf64_Sym sym;
    std::memcpy(&sym, static_cast<const char*>(data->d_buf) + i * sizeof sym, sizeof sym);
    unsigned char type = ELF64_ST_TYPE(sym.st_info);
    if (sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || sym.st_name >= strings.size()) {
        return {};
    }
    const char* p = strings.data() + sym.st_name;
    const void* end = std::memchr(p, '\0', strings.size() - sym.st_name);
    if (end == nullptr) {
        return {};   // unterminated: libelf's elf_strptr refuses it too
    }
    std::string_view n(p, static_cast<std::size_t>(static_cast<const char*>(end) - p));
    if (auto at = n.find('@'); at != std::string_view::npos && at > 0) {
        n = n.substr(0, at);
    }
    return n;
}

std::optional<symbol> symbol_table::at(std::size_t i) const {
    std::string_view n = name_at(i);
    if (n.empty()) {
        return std::nullopt;
    }
    Elf64_Sym sym;
    std::memcpy(&sym, static_cast<const char*>(data->d_buf) + i * sizeof sym, sizeof sym);
    unsigned char bind = ELF64_ST_BIND(sym.st_info);
    section_kind section = sym.st_shndx == SHN_ABS ? section_kind::data
                           : sym.st_shndx < sections.size() ? sections[sym.st_shndx]
                                                           : section_kind::other;
    return symbol{std::string(n), sym.st_value, sym.st_size, kind_of(ELF64_ST_TYPE(sym.st_info)),
                  bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE, dynsym, section};
}

symbol_name_index::symbol_name_index(std::vector<symbol_table> tables, const symbol_names_key& key)
    : tables_(std::move(tables)) {
    std::size_t total = 0;
    for (const auto& t : tables_) {
        first_.push_back(total);
        total += t.count;
    }
    names_ = symbol_names::build(tables_, key);
}

symbol_name_index::symbol_name_index(std::vector<symbol_table> tables, symbol_names names)
    : tables_(std::move(tables)), names_(std::move(names)) {
    std::size_t total = 0;
    for (const auto& t : tables_) {
        first_.push_back(total);
        total += t.count;
    }
}

std::vector<symbol> symbol_name_index::find(std::string_view name) const {
    std::vector<symbol> out;
    if (!names_) {
        return out;
    }
    // A hash match is checked against the entry's name: equal hashes never answer wrongly.
    for (std::size_t pos : names_->candidates(name)) {
        std::size_t k = static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), pos) - first_.begin()) - 1;
        if (tables_[k].name_at(pos - first_[k]) == name) {
            if (auto s = tables_[k].at(pos - first_[k])) {
                out.push_back(std::move(*s));
            }
        }
    }
    // elf_file::symbols()'s order and deduplication within one name: by value, .symtab
    // first, the first of the tables' order kept (entries of equal hash are in that order).
    std::stable_sort(out.begin(), out.end(), [](const symbol& a, const symbol& b) {
        if (a.value != b.value) return a.value < b.value;
        return a.from_dynsym < b.from_dynsym;
    });
    out.erase(std::unique(out.begin(), out.end(), [](const symbol& a, const symbol& b) { return a.value == b.value; }),
              out.end());
    return out;
}

}  // namespace ompdbg::dwarf::internal
