// info registers [REG...]: the general registers of the selected frame, each in hex and
// in its natural format (eflags as flag names, rip and rsp as addresses).

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/registers.hpp"

namespace ompdbg::app {

namespace {

std::string eflags_text(std::uint64_t v) {
    static constexpr std::pair<int, const char*> bits[] = {
        {0, "CF"}, {2, "PF"}, {4, "AF"}, {6, "ZF"}, {7, "SF"}, {8, "TF"}, {9, "IF"},
        {10, "DF"}, {11, "OF"}, {14, "NT"}, {16, "RF"}, {17, "VM"}, {18, "AC"}, {19, "VIF"},
        {20, "VIP"}, {21, "ID"}};
    std::string out = "[ ";
    for (auto [bit, name] : bits) {
        if ((v >> bit) & 1) {
            out += name;
            out += ' ';
        }
    }
    return out + "]";
}

std::string register_natural(session& s, std::string_view name, std::uint64_t v, std::size_t size) {
    if (name == "rip" || name == "pc") {
        std::string l = value_symbol_label(s, v);
        return l.empty() ? fmt::format("0x{:x}", v) : fmt::format("0x{:x} <{}>", v, l);
    }
    if (name == "rsp" || name == "rbp" || name == "sp" || name == "fp") {
        return fmt::format("0x{:x}", v);
    }
    if (name == "eflags") {
        return eflags_text(v);
    }
    if (size == 8) {
        return fmt::format("{}", static_cast<std::int64_t>(v));
    }
    if (size == 4) {
        return fmt::format("{}", static_cast<std::int32_t>(v));
    }
    if (size == 2) {
        return fmt::format("{}", static_cast<std::int16_t>(v));
    }
    return fmt::format("{}", static_cast<std::int8_t>(v));
}

}  // namespace

void cmd_info_registers(session& s, std::string_view args) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        error::send("The program has no registers now.");
    }
    frame_context ctx = frame_context::for_selection(s);
    tracer::registers regs = ctx.frame_registers();
    std::vector<std::pair<std::string, std::size_t>> which;
    std::string_view rest = trim(args);
    if (rest.empty()) {
        for (const tracer::register_info& r : tracer::general_registers()) {
            which.emplace_back(r.name, r.size);
        }
        // gdb lists the AVX-512 opmask registers after gs on CPUs that have them.
        if (regs.has_avx512_masks()) {
            for (int k = 0; k < 8; ++k) {
                which.emplace_back("k" + std::to_string(k), 8);
            }
        }
    } else {
        while (!rest.empty()) {
            std::size_t sp = rest.find_first_of(" \t");
            std::string name(rest.substr(0, sp));
            rest = sp == std::string_view::npos ? std::string_view() : trim(rest.substr(sp));
            if (!name.empty() && name[0] == '$') {
                name.erase(0, 1);
            }
            std::size_t size = 8;
            bool known = false;
            for (const tracer::register_info& r : tracer::general_registers()) {
                if (r.name == name) {
                    size = r.size;
                    known = true;
                }
            }
            if (!known) {
                if (!regs.read(name)) {
                    error::send(fmt::format("Invalid register `{}'", name));
                }
                // Sub-registers: size from the name (eax 4, ax 2, al 1).
                if (name.size() == 3 && name[0] == 'e') {
                    size = 4;
                } else if (name.size() == 2 && (name[1] == 'l' || name[1] == 'h')) {
                    size = 1;
                } else if (name.size() == 2) {
                    size = 2;
                }
                if (name.size() >= 3 && name[0] == 'r' && std::isdigit(static_cast<unsigned char>(name[1]))) {
                    char last = name.back();
                    size = last == 'd' ? 4 : last == 'w' ? 2 : last == 'b' ? 1 : 8;
                }
            }
            which.emplace_back(name, size);
        }
    }
    for (auto& [name, size] : which) {
        auto v = regs.read(name);
        if (!v) {
            continue;
        }
        std::string hex = fmt::format("0x{:x}", *v);
        s.out().line(fmt::format("{:<15}{:<19} {}", name, hex, register_natural(s, name, *v, size)));
    }
}

}  // namespace ompdbg::app
