// enumerator_index: enum constants by name over all CUs, for eval_context::lookup_enumerator.

#include <dwarf.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {

struct enumerator_index::impl {
    Dwarf* dwarf = nullptr;
    std::once_flag built;
    std::map<std::string, std::pair<Dwarf_Die, std::int64_t>, std::less<>> by_name;

    // Enumerations live at CU level, in namespaces, and nested in classes (C++).
    void walk(Dwarf_Die& parent, const std::string& scope) {
        Dwarf_Die child;
        if (dwarf_child(&parent, &child) != 0) {
            return;
        }
        do {
            int tag = dwarf_tag(&child);
            const char* n = dwarf_diename(&child);
            std::string name = n ? n : "";
            if (tag == DW_TAG_enumeration_type) {
                type t(child);
                std::string enum_scope = scope;
                for (auto& e : t.enumerators()) {
                    by_name.emplace(e.name, std::make_pair(child, e.value));
                    // Plain C++ enums are also reachable with their scope ("ns::RED").
                    if (!scope.empty() && e.name.find("::") == std::string::npos) {
                        by_name.emplace(scope + e.name, std::make_pair(child, e.value));
                    }
                }
            } else if (tag == DW_TAG_namespace) {
                walk(child, scope + (name.empty() ? "(anonymous namespace)" : name) + "::");
            } else if ((tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
                        tag == DW_TAG_union_type) && !name.empty()) {
                walk(child, scope + name + "::");
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }

    void build() {
        Dwarf_Off off = 0;
        Dwarf_Off next = 0;
        std::size_t hsize = 0;
        while (dwarf_nextcu(dwarf, off, &next, &hsize, nullptr, nullptr, nullptr) == 0) {
            Dwarf_Die cu;
            if (dwarf_offdie(dwarf, off + hsize, &cu)) {
                walk(cu, "");
            }
            off = next;
        }
    }
};

enumerator_index::enumerator_index(Dwarf* dwarf) : impl_(std::make_unique<impl>()) {
    impl_->dwarf = dwarf;
}

enumerator_index::~enumerator_index() = default;

std::optional<value> enumerator_index::find(std::string_view name) {
    if (!impl_->dwarf) {
        return std::nullopt;
    }
    std::call_once(impl_->built, [this] { impl_->build(); });
    auto it = impl_->by_name.find(name);
    if (it == impl_->by_name.end()) {
        return std::nullopt;
    }
    value v;
    v.val_type = type(it->second.first);
    v.bytes.resize(v.val_type.size());
    std::int64_t val = it->second.second;
    std::memcpy(v.bytes.data(), &val, std::min<std::size_t>(sizeof val, v.bytes.size()));
    return v;
}

}  // namespace ompdbg::dwarf
