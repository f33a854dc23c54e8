// x/NFU ADDRESS: gdb's memory examination (formats, units, labels, strings, instructions),
// remembering the last format, unit and address for a bare `x`.

#include <array>
#include <cctype>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_data.hpp"
#include "ompdbg/debugger/symbols/disassembler.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

namespace {

struct x_state {
    char format = 'x';
    char unit = 'w';
    std::size_t count = 0;   ///< the last count given (gdb's last_count)
    std::optional<std::uint64_t> next;
};

x_state& last_x() {
    static x_state st;
    return st;
}

std::size_t unit_size(char u) {
    switch (u) {
    case 'b': return 1;
    case 'h': return 2;
    case 'w': return 4;
    case 'g': return 8;
    default: return 4;
    }
}

std::string x_label(session& s, std::uint64_t addr) {
    std::string l = symbol_label(s, addr);
    return l.empty() ? fmt::format("0x{:x}:", addr) : fmt::format("0x{:x} <{}>:", addr, l);
}

std::string format_unit(session& s, char f, std::size_t size, std::uint64_t raw) {
    const unsigned bits = static_cast<unsigned>(size * 8);
    const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
    raw &= mask;
    std::int64_t sv = static_cast<std::int64_t>(raw);
    if (bits < 64 && (raw >> (bits - 1)) != 0) {
        sv = static_cast<std::int64_t>(raw | ~mask);
    }
    switch (f) {
    case 'x': return fmt::format("0x{:0{}x}", raw, size * 2);
    case 'z': return fmt::format("0x{:0{}x}", raw, size * 2);
    case 'd': return fmt::format("{}", sv);
    case 'u': return fmt::format("{}", raw);
    case 'o': return raw == 0 ? std::string("0") : fmt::format("0{:o}", raw);
    case 't': return fmt::format("{:0{}b}", raw, bits);
    case 'a': {
        std::string l = symbol_label(s, raw);
        return l.empty() ? fmt::format("0x{:x}", raw) : fmt::format("0x{:x} <{}>", raw, l);
    }
    case 'c': {
        auto c = static_cast<std::int8_t>(raw & 0xff);
        unsigned char uc = static_cast<unsigned char>(c);
        std::string shown;
        switch (uc) {
        case 0: shown = "\\000"; break;
        case '\n': shown = "\\n"; break;
        case '\t': shown = "\\t"; break;
        case '\r': shown = "\\r"; break;
        case '\'': shown = "\\'"; break;
        case '\\': shown = "\\\\"; break;
        default:
            shown = std::isprint(uc) ? std::string(1, static_cast<char>(uc)) : fmt::format("\\{:03o}", uc);
        }
        return fmt::format("{} '{}'", static_cast<int>(c), shown);
    }
    case 'f': {
        if (size == 8) {
            double d;
            std::memcpy(&d, &raw, 8);
            return fmt::format("{}", d);
        }
        if (size == 4) {
            float fl;
            std::uint32_t r32 = static_cast<std::uint32_t>(raw);
            std::memcpy(&fl, &r32, 4);
            return fmt::format("{}", fl);
        }
        return fmt::format("{}", sv);
    }
    default: return fmt::format("0x{:x}", raw);
    }
}

std::size_t per_line(char f, std::size_t size) {
    if (f == 'c') {
        return 8;
    }
    if (f == 'a') {
        return 2;
    }
    switch (size) {
    case 1: return 8;
    case 2: return 8;
    case 4: return 4;
    default: return 2;
    }
}

/// C-escaped string for x/s (gdb's repeat and escape rules, simplified).
std::string quote_string(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case 033: out += "\\033"; break;
        default:
            if (std::isprint(c)) {
                out += static_cast<char>(c);
            } else {
                out += fmt::format("\\{:03o}", c);
            }
        }
    }
    return out + "\"";
}

/// The type of one unit `x` shows (gdb's builtin int8..int64, or float/double for /f):
/// $_ points to it, $__ holds it.
dwarf::type examined_type(char f, std::size_t size) {
    if (f == 'f' && (size == 4 || size == 8)) {
        return dwarf::type::make_base(size == 4 ? "float" : "double", size, dwarf::base_encoding::floating);
    }
    return dwarf::type::make_base(fmt::format("int{}_t", size * 8), size, dwarf::base_encoding::signed_int);
}

/// gdb's $_ (the last address examined, typed as a pointer to its unit) and $__ (its
/// contents; void when `x` did not read it as a unit: x/s, x/i).
void set_examined(session& s, std::uint64_t addr, const dwarf::type& unit, std::span<const std::byte> contents) {
    dwarf::value p;
    p.val_type = dwarf::type::pointer_to(unit);
    p.bytes.resize(8);
    std::memcpy(p.bytes.data(), &addr, 8);
    set_convenience_variable(s, "_", p);
    if (contents.empty()) {
        set_convenience_variable(s, "__", std::nullopt);
        return;
    }
    dwarf::value v;
    v.val_type = unit;
    v.bytes.assign(contents.begin(), contents.end());
    v.address = addr;
    set_convenience_variable(s, "__", v);
}

}  // namespace

std::uint64_t value_as_address(const dwarf::value& v) {
    dwarf::type t = v.val_type.strip_cv_typedef();
    if ((t.kind() == dwarf::type_kind::array || t.kind() == dwarf::type_kind::function ||
         dwarf::is_nodebug_function(t)) &&
        v.address) {
        return *v.address;
    }
    return static_cast<std::uint64_t>(dwarf::as_integer(v));
}

void cmd_x(session& s, std::string_view args) {
    auto [fmtspec, expr] = split_format(args);
    x_state& st = last_x();
    std::size_t count = 1;
    std::string digits;
    char f = st.format;
    char u = st.unit;
    bool unit_given = false;
    for (char c : fmtspec) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digits += c;
        } else if (c == 'b' || c == 'h' || c == 'w' || c == 'g') {
            u = c;
            unit_given = true;
        } else if (std::strchr("xduotacfszi", c) != nullptr) {
            f = c;
        } else {
            error::send(fmt::format("Invalid number \"{}\".", fmtspec));
        }
    }
    if (!digits.empty()) {
        count = std::stoul(digits);
        st.count = count;
    } else if (fmtspec.empty() && expr.empty() && st.count > 0) {
        count = st.count;   // gdb: a bare `x` (and Enter) shows as many as last time
    }
    if (!unit_given) {
        if (f == 'a') {
            u = 'g';
        } else if (f == 'c') {
            u = 'b';
        }
    }
    frame_context ctx = frame_context::for_selection(s);
    std::uint64_t addr = 0;
    if (!expr.empty()) {
        addr = value_as_address(dwarf::evaluate(expr, ctx));
    } else if (st.next) {
        addr = *st.next;
    } else {
        error::send("Argument required (starting display address).");
    }
    st.format = f;
    if (f != 's' && f != 'i') {
        st.unit = u;
    }

    if (f == 's') {
        for (std::size_t i = 0; i < count; ++i) {
            std::string text;
            std::array<std::byte, 1> b{};
            for (std::size_t k = 0; k < 200; ++k) {
                ctx.read_memory(addr + text.size(), b);
                if (b[0] == std::byte{0}) {
                    break;
                }
                text += static_cast<char>(b[0]);
            }
            s.out().line(fmt::format("{}\t{}", x_label(s, addr), quote_string(text)));
            set_examined(s, addr, examined_type('x', 1), {});
            addr += text.size() + 1;
        }
        st.next = addr;
        return;
    }
    if (f == 'i') {
        disassembler dis;
        std::optional<std::uint64_t> pc;
        if (ctx.has_frame()) {
            pc = ctx.frame()->pc();
        }
        for (std::size_t i = 0; i < count; ++i) {
            std::array<std::byte, 16> code{};
            std::size_t got = 0;
            try {
                ctx.read_memory(addr, code);
                got = code.size();
            } catch (const ompdbg::error&) {
                // Near the end of a mapping: read byte by byte what is there.
                for (; got < code.size(); ++got) {
                    try {
                        ctx.read_memory(addr + got, std::span<std::byte>(code).subspan(got, 1));
                    } catch (const ompdbg::error&) {
                        break;
                    }
                }
                if (got == 0) {
                    error::send(fmt::format("Cannot access memory at address 0x{:x}", addr));
                }
            }
            instruction ins = dis.decode(addr, std::span<const std::byte>(code.data(), got),
                                         [&](std::uint64_t a) { return symbol_label(s, a); });
            std::string marker = (pc && *pc == addr) ? "=> " : "   ";
            s.out().line(fmt::format("{}{}\t{}", marker, x_label(s, addr), ins.text));
            set_examined(s, addr, examined_type('x', 1), {});
            addr += ins.size;
        }
        st.next = addr;
        return;
    }

    const std::size_t size = unit_size(u);
    const std::size_t n_line = per_line(f, size);
    std::string line;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t a = addr + i * size;
        if (i % n_line == 0) {
            if (!line.empty()) {
                s.out().line(line);
            }
            line = x_label(s, a);
        }
        std::array<std::byte, 8> b{};
        try {
            ctx.read_memory(a, std::span<std::byte>(b.data(), size));
        } catch (const ompdbg::error& e) {
            if (!line.empty()) {
                line += "\t";
                s.out().line(line);
            }
            throw;
        }
        std::uint64_t raw = 0;
        std::memcpy(&raw, b.data(), size);
        line += "\t" + format_unit(s, f, size, raw);
    }
    if (!line.empty()) {
        s.out().line(line);
    }
    st.next = addr + count * size;
    if (count > 0) {
        std::array<std::byte, 8> last{};
        ctx.read_memory(addr + (count - 1) * size, std::span<std::byte>(last.data(), size));
        set_examined(s, addr + (count - 1) * size, examined_type(f, size), std::span<const std::byte>(last.data(), size));
    }
}

}  // namespace ompdbg::app
