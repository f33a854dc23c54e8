#include "ompdbg/tracer/target.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace ompdbg::tracer {

std::optional<std::uint64_t> defined_symbol_value(const dwarf::elf_file& elf, std::string_view name) {
    std::optional<dwarf::symbol> best;
    auto rank = [](const dwarf::symbol& s) { return (s.is_global ? 2 : 0) + (s.from_dynsym ? 1 : 0); };
    for (auto& s : elf.find_symbols(name)) {
        if (!best || rank(s) > rank(*best)) {
            best = s;
        }
    }
    if (!best) {
        return std::nullopt;
    }
    return best->value;
}

const loaded_module* target::module_at(virt_addr addr) {
    const auto& mods = modules();
    for (const auto& m : mods) {
        if (addr.addr() >= m.start && addr.addr() < m.end) {
            return &m;
        }
    }
    // The part of a module's .bss past its file-backed pages is an anonymous mapping that
    // /proc/PID/maps does not name: its PT_LOAD segments say it is the module's (gdb's
    // section table does the same for `info symbol`, `x/a`, `print &var`).
    for (const auto& m : mods) {
        if (!m.elf || m.end == 0) {
            continue;
        }
        std::uint64_t end = m.load_bias + m.elf->load_range().second;
        if (addr.addr() >= m.end && addr.addr() < end) {
            return &m;
        }
    }
    return nullptr;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> target::vdso_range() {
    if (!is_live()) {
        return std::nullopt;
    }
    std::ifstream maps("/proc/" + std::to_string(pid()) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("[vdso]") == std::string::npos) {
            continue;
        }
        std::istringstream in(line);
        std::uint64_t start = 0, end = 0;
        char dash = 0;
        in >> std::hex >> start >> dash >> end;
        if (end > start) {
            return std::pair(start, end);
        }
    }
    return std::nullopt;
}

std::string target::read_string(virt_addr addr, std::size_t max) {
    std::string out;
    std::array<std::byte, 256> buf;
    while (out.size() < max) {
        // Read in chunks that do not cross a page, so a string ending just before an
        // unmapped page is still read completely.
        std::size_t page_left = 4096 - (addr.addr() & 4095);
        std::size_t want = std::min({buf.size(), page_left, max - out.size()});
        std::size_t got = try_read_memory(addr, std::span(buf.data(), want));
        if (got == 0) {
            if (out.empty()) {
                read_memory(addr, std::span(buf.data(), 1));   // throws the usual message
            }
            break;
        }
        for (std::size_t i = 0; i < got; ++i) {
            if (buf[i] == std::byte{0}) {
                out.append(reinterpret_cast<const char*>(buf.data()), i);
                return out;
            }
        }
        out.append(reinterpret_cast<const char*>(buf.data()), got);
        addr += static_cast<std::int64_t>(got);
        if (got < want) {
            break;
        }
    }
    return out;
}

}  // namespace ompdbg::tracer
