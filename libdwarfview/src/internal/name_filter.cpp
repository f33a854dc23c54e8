#include "internal/name_filter.hpp"

#include <cstring>

#include <gelf.h>

namespace ompdbg::dwarf::internal {

namespace {

bool is_string_section(std::string_view name) {
    for (std::string_view s : {".debug_str", ".debug_line_str", ".debug_info", ".debug_types"}) {
        if (name == s) {
            return true;
        }
    }
    return false;
}

bool is_gnu_compressed(std::string_view name) {
    return name.starts_with(".zdebug_");
}

// The string-bearing sections of one ELF file, as libdw left them (it decompresses
// SHF_COMPRESSED sections in place when the Dwarf is created). False when one of them is
// still compressed, so that its bytes are not plain text.
bool collect(Elf* elf, std::vector<std::pair<const char*, std::size_t>>& out) {
    std::size_t shstrndx = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        return false;
    }
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) {
            continue;
        }
        const char* n = elf_strptr(elf, shstrndx, shdr.sh_name);
        std::string_view name = n ? n : "";
        if (is_gnu_compressed(name)) {
            return false;   // .zdebug_*: libdw keeps its own decompressed copy
        }
        if (!is_string_section(name) || shdr.sh_type == SHT_NOBITS) {
            continue;
        }
        if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
            return false;
        }
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (data == nullptr || data->d_buf == nullptr) {
            return false;
        }
        out.emplace_back(static_cast<const char*>(data->d_buf), data->d_size);
    }
    return true;
}

}  // namespace

name_filter::name_filter(Dwarf* dwarf) {
    std::vector<std::pair<const char*, std::size_t>> found;
    usable_ = dwarf != nullptr && collect(dwarf_getelf(dwarf), found);
    if (usable_) {
        // Strings of a dwz supplementary file (DW_FORM_strp_sup, DW_FORM_GNU_strp_alt).
        Elf* main = dwarf_getelf(dwarf);
        std::size_t shstrndx = 0;
        bool has_alt_link = false;
        if (elf_getshdrstrndx(main, &shstrndx) == 0) {
            for (Elf_Scn* scn = elf_nextscn(main, nullptr); scn; scn = elf_nextscn(main, scn)) {
                GElf_Shdr shdr;
                if (gelf_getshdr(scn, &shdr) == nullptr) continue;
                const char* n = elf_strptr(main, shstrndx, shdr.sh_name);
                if (n && (std::string_view(n) == ".gnu_debugaltlink" ||
                          std::string_view(n) == ".debug_sup")) {
                    has_alt_link = true;
                }
            }
        }
        if (has_alt_link) {
            Dwarf* alt = dwarf_getalt(dwarf);
            usable_ = alt != nullptr && collect(dwarf_getelf(alt), found);
        }
    }
    for (auto& [p, n] : found) {
        regions_.push_back(region{p, n});
    }
}

bool name_filter::may_contain(std::string_view leaf) const {
    if (!usable_ || leaf.empty()) {
        return true;
    }
    for (const region& r : regions_) {
        // The name may be the tail of a longer string (linkers merge string tails), so what
        // precedes it does not matter.
        bool found = false;
        for_each_name_at(r.data, r.size, leaf, [&](std::size_t) {
            found = true;
            return r.size;
        });
        if (found) {
            return true;
        }
    }
    return false;
}

std::string leaf_of(std::string_view q) {
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i + 1 < q.size(); ++i) {
        char c = q[i];
        if (c == '<' || c == '(') {
            ++depth;
        } else if ((c == '>' || c == ')') && depth > 0) {
            --depth;
        } else if (depth == 0 && c == ':' && q[i + 1] == ':') {
            start = i + 2;
            ++i;
        }
    }
    std::string leaf(q.substr(start));
    if (leaf.find("operator") != std::string::npos || leaf.find(' ') != std::string::npos ||
        leaf.find('(') != std::string::npos || depth != 0) {
        return {};
    }
    return leaf;
}

function_query parse_function_query(std::string_view name) {
    function_query q;
    q.name = name;
    std::string& query = q.name;
    while (!query.empty() && query.front() == ' ') query.erase(0, 1);
    while (!query.empty() && query.back() == ' ') query.pop_back();
    if (query.starts_with("::")) {
        query.erase(0, 2);
    }
    if (auto p = query.find('('); p != std::string::npos && !query.starts_with("operator")) {
        q.params = query.substr(p);
        query = query.substr(0, p);
        while (!query.empty() && query.back() == ' ') query.pop_back();
    }
    return q;
}

}  // namespace ompdbg::dwarf::internal
