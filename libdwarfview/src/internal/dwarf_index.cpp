#include "internal/dwarf_index.hpp"

#include "internal/die_util.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include <dwarf.h>

namespace ompdbg::dwarf::internal {

namespace {

bool has_code(Dwarf_Die die) {
    Dwarf_Attribute attr;
    Dwarf_Addr low = 0;
    if (dwarf_attr(&die, DW_AT_ranges, &attr) != nullptr) {
        return true;
    }
    // Functions discarded by the linker keep a DW_AT_low_pc of 0.
    return dwarf_lowpc(&die, &low) == 0 && low != 0;
}

// The DIE's own DW_AT_name (not its declaration's), "" when none.
std::string own_name(Dwarf_Die die) {
    Dwarf_Attribute attr;
    const char* s = dwarf_formstring(dwarf_attr(&die, DW_AT_name, &attr));
    return s ? s : "";
}

bool is_named_scope_type(int tag) {
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
           tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type;
}

// Whether dwarf_index::walk records a qualified name for a DIE of this kind found at
// namespace or class scope (the walk's rules, kept in one place with it below).
bool records_qualified_name(Dwarf_Die die) {
    std::string name = own_name(die);
    if (name.empty()) {
        return false;
    }
    switch (dwarf_tag(&die)) {
    case DW_TAG_structure_type: case DW_TAG_class_type: case DW_TAG_union_type:
    case DW_TAG_enumeration_type: case DW_TAG_typedef: case DW_TAG_base_type:
    case DW_TAG_subprogram: case DW_TAG_variable:
        return true;
    case DW_TAG_member:
        return flag_of(die, DW_AT_external, false) || flag_of(die, DW_AT_declaration, false);
    default:
        return false;
    }
}

// The "ns::klass::" prefix of a DIE recorded by the walk, found by descending from its unit
// through the children whose subtree holds its offset; nullopt when a scope on the way is
// one the walk does not name (a function, an unnamed class).
std::optional<std::string> scope_prefix(Dwarf_Die target) {
    Dwarf_Die unit;
    if (dwarf_diecu(&target, &unit, nullptr, nullptr) == nullptr) {
        return std::nullopt;
    }
    const Dwarf_Off off = dwarf_dieoffset(&target);
    std::string prefix;
    Dwarf_Die cur = unit;
    for (int depth = 0; depth < 64; ++depth) {
        Dwarf_Die child;
        if (dwarf_child(&cur, &child) != 0) {
            return std::nullopt;
        }
        for (;;) {
            if (dwarf_dieoffset(&child) == off) {
                return prefix;
            }
            Dwarf_Die next;
            if (dwarf_siblingof(&child, &next) == 0 && dwarf_dieoffset(&next) <= off) {
                child = next;
                continue;
            }
            break;   // the target lies inside `child`
        }
        if (dwarf_dieoffset(&child) > off || dwarf_haschildren(&child) <= 0) {
            return std::nullopt;
        }
        int tag = dwarf_tag(&child);
        std::string name = own_name(child);
        if (tag == DW_TAG_namespace) {
            prefix += (name.empty() ? "(anonymous namespace)" : name) + "::";
        } else if (is_named_scope_type(tag) && !name.empty()) {
            prefix += name + "::";
        } else {
            return std::nullopt;
        }
        cur = child;
    }
    return std::nullopt;
}

// The walk's record for one DIE, without the walk.
std::optional<std::string> recorded_name(Dwarf_Die die) {
    if (!records_qualified_name(die)) {
        return std::nullopt;
    }
    auto prefix = scope_prefix(die);
    if (!prefix) {
        return std::nullopt;
    }
    return *prefix + own_name(die);
}

}  // namespace

// The qualified name of the first DIE on the abstract_origin / specification chain that has
// one (`recorded` says), else the DIE's plain name.
template <typename Recorded>
std::string follow_to_qualified(Dwarf_Die die, Recorded&& recorded) {
    Dwarf_Die cur = die;
    for (int step = 0; step < 8; ++step) {
        if (std::optional<std::string> q = recorded(cur)) {
            return *q;
        }
        auto next = ref_attr(cur, DW_AT_abstract_origin, false);
        if (!next) {
            next = ref_attr(cur, DW_AT_specification, false);
        }
        if (!next) {
            break;
        }
        cur = *next;
    }
    return name_of(die);
}

std::string qualified_name_without_index(Dwarf_Die die) {
    return follow_to_qualified(die, recorded_name);
}

std::string strip_template_args(const std::string& name) {
    if (name.empty() || name.back() != '>' || name.rfind("operator", 0) == 0 ||
        name.find("::operator") != std::string::npos) {
        return name;
    }
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
        if (name[i] == '>') {
            ++depth;
        } else if (name[i] == '<') {
            if (--depth == 0) {
                return name.substr(0, i);
            }
        }
    }
    return name;
}

std::string normalize_type_name(std::string_view name) {
    std::istringstream in{std::string(name)};
    std::vector<std::string> words;
    for (std::string w; in >> w;) {
        words.push_back(w);
    }
    int longs = 0;
    bool is_unsigned = false, is_signed = false, is_short = false, is_char = false, is_int = false;
    for (auto& w : words) {
        if (w == "long") ++longs;
        else if (w == "unsigned") is_unsigned = true;
        else if (w == "signed") is_signed = true;
        else if (w == "short") is_short = true;
        else if (w == "char") is_char = true;
        else if (w == "int") is_int = true;
        else {
            std::string joined;
            for (auto& x : words) {
                joined += (joined.empty() ? "" : " ") + x;
            }
            return joined;
        }
    }
    if (words.empty()) {
        return {};
    }
    (void)is_int;
    std::string u = is_unsigned ? "unsigned " : "";
    if (is_char) {
        return is_unsigned ? "unsigned char" : is_signed ? "signed char" : "char";
    }
    if (is_short) return u + "short";
    if (longs >= 2) return u + "long long";
    if (longs == 1) return u + "long";
    return u + "int";
}

dwarf_index::dwarf_index(Dwarf* dwarf) {
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version = 0;
    std::uint8_t unit_type = 0;
    Dwarf_Die cudie, subdie;
    while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
        cu = next;
        walk(cudie, "", nullptr, 0);
        if (unit_type == DW_UT_skeleton) {
            walk(subdie, "", nullptr, 0);
        }
    }
    name_functions();
}

dwarf_index::dwarf_index(Dwarf_Die unit) {
    walk(unit, "", nullptr, 0);
    name_functions();
}

void dwarf_index::name_functions() {
    // Names of functions come last: a definition may refer (DW_AT_specification) to a
    // declaration later in the unit or in another unit.
    for (std::size_t i = 0; i < functions_.size(); ++i) {
        auto& f = functions_[i];
        f.name = qualified_name(f.die);
        std::vector<std::string> keys;
        std::string q = f.name;
        keys.push_back(q);
        std::string stripped = strip_template_args(q);
        // Every "::" suffix: `break method` and `break klass::method` (gdb's wild matching).
        for (const std::string* s : {&q, &stripped}) {
            int depth = 0;
            for (std::size_t k = 0; k + 1 < s->size(); ++k) {
                char c = (*s)[k];
                if (c == '<' || c == '(') ++depth;
                else if ((c == '>' || c == ')') && depth > 0) --depth;
                else if (depth == 0 && c == ':' && (*s)[k + 1] == ':') {
                    keys.push_back(s->substr(k + 2));
                }
            }
            keys.push_back(*s);
        }
        for (auto& k : std::vector<std::string>(keys)) {
            keys.push_back(strip_template_args(k));
        }
        std::string linkage = linkage_name_of(f.die);
        if (!linkage.empty()) {
            keys.push_back(linkage);
        }
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        for (auto& k : keys) {
            if (!k.empty()) {
                function_keys_.emplace(k, i);
            }
        }
    }
    for (std::size_t i = 0; i < globals_.size(); ++i) {
        globals_[i].name = qualified_name(globals_[i].die);
        global_keys_.emplace(globals_[i].name, i);
    }
}

void dwarf_index::walk(Dwarf_Die parent, const std::string& prefix, const Dwarf_Die* subprogram,
                       int depth) {
    if (depth > 64) {
        return;   // corrupt nesting; nothing sane is that deep
    }
    Dwarf_Die child;
    if (dwarf_child(&parent, &child) != 0) {
        return;
    }
    do {
        int tag = dwarf_tag(&child);
        // The DIE's own name: dwarf_diename would follow DW_AT_specification, and the
        // qualified name of a definition is that of its declaration.
        Dwarf_Attribute name_attr;
        const char* raw_name = dwarf_formstring(dwarf_attr(&child, DW_AT_name, &name_attr));
        std::string name = raw_name ? raw_name : "";
        switch (tag) {
        case DW_TAG_namespace: {
            std::string ns = name.empty() ? "(anonymous namespace)" : name;
            walk(child, prefix + ns + "::", nullptr, depth + 1);
            break;
        }
        case DW_TAG_structure_type: case DW_TAG_class_type: case DW_TAG_union_type:
        case DW_TAG_enumeration_type: case DW_TAG_typedef: case DW_TAG_base_type: {
            if (subprogram != nullptr) {
                break;   // local types are found through scope, not by global name
            }
            if (!name.empty()) {
                std::string q = prefix + name;
                qualified_[die_key(child)] = q;
                std::string key = tag == DW_TAG_base_type ? normalize_type_name(q) : q;
                types_.push_back(type_record{child, key, tag, flag_of(child, DW_AT_declaration, false)});
                type_keys_.emplace(key, types_.size() - 1);
                if (tag != DW_TAG_typedef && tag != DW_TAG_base_type) {
                    walk(child, q + "::", nullptr, depth + 1);
                }
            }
            break;
        }
        case DW_TAG_subprogram: {
            if (!name.empty() && subprogram == nullptr) {
                qualified_[die_key(child)] = prefix + name;
            }
            if (has_code(child)) {
                functions_.push_back(function_record{child, child, false, {}});
                Dwarf_Die self = child;
                walk(child, prefix, &self, depth + 1);
            }
            break;
        }
        case DW_TAG_inlined_subroutine: {
            if (subprogram != nullptr && has_code(child)) {
                Dwarf_Die fb = *subprogram;
                functions_.push_back(function_record{child, fb, true, {}});
                walk(child, prefix, &fb, depth + 1);
            }
            break;
        }
        case DW_TAG_lexical_block: case DW_TAG_try_block: case DW_TAG_catch_block:
            if (subprogram != nullptr) {
                Dwarf_Die fb = *subprogram;
                walk(child, prefix, &fb, depth + 1);
            }
            break;
        case DW_TAG_variable: case DW_TAG_member: {
            if (subprogram != nullptr ||
                (name.empty() && !dwarf_hasattr(&child, DW_AT_specification))) {
                break;
            }
            if (tag == DW_TAG_member && !flag_of(child, DW_AT_external, false) &&
                !flag_of(child, DW_AT_declaration, false)) {
                break;   // an ordinary data member
            }
            if (!name.empty()) {
                qualified_[die_key(child)] = prefix + name;
            }
            if (tag == DW_TAG_variable) {
                bool loc = dwarf_hasattr(&child, DW_AT_location) ||
                           dwarf_hasattr(&child, DW_AT_const_value);
                globals_.push_back(global_record{child, {}, loc});
            }
            break;
        }
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

std::string dwarf_index::qualified_name(Dwarf_Die die) const {
    return follow_to_qualified(die, [&](Dwarf_Die d) -> std::optional<std::string> {
        if (auto it = qualified_.find(die_key(d)); it != qualified_.end()) {
            return it->second;
        }
        return std::nullopt;
    });
}

std::vector<std::size_t> dwarf_index::functions_named(const std::string& key) const {
    std::vector<std::size_t> out;
    auto [b, e] = function_keys_.equal_range(key);
    for (auto it = b; it != e; ++it) {
        out.push_back(it->second);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::size_t> dwarf_index::globals_named(const std::string& key) const {
    std::vector<std::size_t> out;
    auto [b, e] = global_keys_.equal_range(key);
    for (auto it = b; it != e; ++it) {
        out.push_back(it->second);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::size_t> dwarf_index::types_named(const std::string& key) const {
    std::vector<std::size_t> out;
    auto [b, e] = type_keys_.equal_range(key);
    for (auto it = b; it != e; ++it) {
        out.push_back(it->second);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace ompdbg::dwarf::internal
