// debug_info's variable and type queries: the variables in scope at an address (innermost
// scope first), and globals and types by name through the index.
#include "ompdbg/dwarf/debug_info.hpp"

#include "ompdbg/dwarf/scope_members.hpp"

#include "internal/debug_info_impl.hpp"
#include "internal/die_util.hpp"
#include "internal/dwarf_index.hpp"

#include <set>

#include <dwarf.h>

namespace ompdbg::dwarf {

using namespace internal;

std::vector<variable> debug_info::variables_at(std::uint64_t addr) const {
    return impl_->memoized(impl_->variables_memo, addr, [&] { return impl_->variables_at_uncached(addr); });
}

std::vector<variable> debug_info::impl::variables_at_uncached(std::uint64_t addr) {
    std::vector<variable> out;
    auto cu = cu_for(addr);
    if (!cu) {
        return out;
    }
    auto chain = scope_chain(cus[*cu]->die, addr);
    // The innermost function instance and the blocks inside it.
    std::size_t start = chain.size();
    while (start > 0) {
        --start;
        int tag = dwarf_tag(&chain[start]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            break;
        }
    }
    if (chain.empty()) {
        return out;
    }
    std::optional<Dwarf_Die> frame_base;
    for (std::size_t i = 0; i < chain.size(); ++i) {
        if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
            frame_base = chain[i];
        }
    }
    // Innermost scope first, so that a name finds the innermost variable that has it; a
    // variable an inner one shadows is still listed, as gdb's `info locals` does. Inside one
    // scope a local and a parameter may share a name (clang's outlined routines: the
    // parameter points to the shared variable, the local is the private copy): both are kept.
    for (std::size_t i = chain.size(); i-- > start;) {
        std::set<std::pair<std::string, bool>> here;
        // With what the abstract instance holds: a parameter a compiler dropped from an
        // inlined copy or a clone is still a parameter (gdb prints it "<optimized out>").
        for (Dwarf_Die child : scope_members(chain[i])) {
            int tag = dwarf_tag(&child);
            if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) {
                continue;
            }
            if (flag_of(child, DW_AT_declaration, false)) {
                continue;   // `extern int x;` inside a function
            }
            std::string name = name_of(child);
            if (name.empty() || !here.emplace(name, tag == DW_TAG_formal_parameter).second) {
                continue;
            }
            variable v;
            v.name = name;
            if (auto t = ref_attr(child, DW_AT_type)) {
                v.var_type = type(*t);
            }
            v.die = child;
            v.is_parameter = tag == DW_TAG_formal_parameter;
            v.decl_file = decl_file_of(child);
            v.decl_line = decl_line_of(child);
            v.frame_base_die = frame_base;
            out.push_back(std::move(v));
        }
    }
    return out;
}

std::optional<variable> debug_info::find_global(std::string_view name,
                                                std::optional<std::uint64_t> preferred_cu_addr) const {
    std::string key(name);
    if (key.starts_with("::")) {
        key.erase(0, 2);
    }
    if (!impl_->may_name(key)) {
        return std::nullopt;
    }
    const auto& idx = impl_->index();
    std::optional<std::size_t> preferred_cu;
    if (preferred_cu_addr) {
        preferred_cu = impl_->cu_for(*preferred_cu_addr);
    }
    const global_record* best = nullptr;
    int best_rank = -1;
    for (std::size_t i : idx.globals_named(key)) {
        const auto& g = idx.globals()[i];
        if (!g.has_location) {
            continue;   // a declaration: the definition is elsewhere (maybe another file)
        }
        int rank = 0;
        if (preferred_cu && impl_->cu_of_die(g.die) == preferred_cu) rank += 4;
        if (flag_of(g.die, DW_AT_external)) rank += 2;
        if (rank > best_rank) {
            best = &g;
            best_rank = rank;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    variable v;
    v.name = best->name;
    if (auto t = ref_attr(best->die, DW_AT_type)) {
        v.var_type = type(*t);
    }
    v.die = best->die;
    v.is_external = flag_of(best->die, DW_AT_external);
    v.decl_file = decl_file_of(best->die);
    v.decl_line = decl_line_of(best->die);
    return v;
}

std::optional<type> debug_info::find_type(std::string_view name) const {
    std::string q(name);
    while (!q.empty() && q.back() == ' ') q.pop_back();
    while (!q.empty() && q.front() == ' ') q.erase(0, 1);
    std::set<int> tags;
    for (auto [kw, tag] : {std::pair<std::string_view, int>{"struct ", DW_TAG_structure_type},
                           {"class ", DW_TAG_class_type}, {"union ", DW_TAG_union_type},
                           {"enum ", DW_TAG_enumeration_type}}) {
        if (q.starts_with(kw)) {
            q.erase(0, kw.size());
            tags.insert(tag);
            // C++ lets `struct` and `class` name either.
            if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
                tags.insert(DW_TAG_structure_type);
                tags.insert(DW_TAG_class_type);
            }
        }
    }
    if (q.starts_with("::")) {
        q.erase(0, 2);
    }
    // C's integer names are matched in any word order ("long" names "long int"): the
    // string filter cannot tell, so they go to the index.
    bool integer_words = false;
    for (std::string_view w : {"long", "short", "signed", "unsigned", "int", "char"}) {
        integer_words = integer_words || q.find(w) != std::string::npos;
    }
    if (!integer_words && !impl_->may_name(q)) {
        return std::nullopt;
    }
    const auto& idx = impl_->index();
    auto lookup = [&](const std::string& key) -> std::optional<type> {
        const type_record* best = nullptr;
        for (std::size_t i : idx.types_named(key)) {
            const auto& t = idx.types()[i];
            if (!tags.empty() && !tags.count(t.tag)) {
                continue;
            }
            if (best == nullptr || (best->declaration && !t.declaration)) {
                best = &t;
            }
        }
        if (best == nullptr) {
            return std::nullopt;
        }
        return type(best->die);
    };
    if (auto t = lookup(q)) {
        return t;
    }
    std::string norm = normalize_type_name(q);
    if (norm != q) {
        return lookup(norm);
    }
    return std::nullopt;
}
}  // namespace ompdbg::dwarf
