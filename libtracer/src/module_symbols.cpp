// Symbol lookup across a target's modules (internal/module_symbols.hpp).

#include "internal/module_symbols.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::tracer::internal {

std::optional<virt_addr> find_module_symbol(target& t, std::string_view name) {
    for (const auto& m : t.modules()) {
        if (m.path.empty()) {
            continue;
        }
        std::shared_ptr<dwarf::elf_file> elf = m.elf;
        if (!elf) {
            try {
                elf = dwarf::elf_file::open(m.path);
            } catch (const error&) {
                continue;
            }
        }
        for (const auto& sym : elf->find_symbols(name)) {
            if (sym.value != 0) {
                return m.to_runtime(sym.value);
            }
        }
    }
    return std::nullopt;
}

}  // namespace ompdbg::tracer::internal
