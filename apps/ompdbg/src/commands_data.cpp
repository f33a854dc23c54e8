// print / output / ptype / whatis / set var / x / info registers / info sharedlibrary /
// info symbol / info address / list: gdb's data commands.

#include <climits>
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_args.hpp"
#include "ompdbg/debugger/symbols/disassembler.hpp"
#include "frame_context.hpp"
#include "session.hpp"
#include "stack.hpp"
#include "symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/registers.hpp"

namespace ompdbg::app {

namespace {

/// "/x foo" → ("x", "foo"); "foo" → ("", "foo").
std::pair<std::string, std::string_view> split_format(std::string_view args) {
    args = trim(args);
    if (args.empty() || args[0] != '/') {
        return {{}, args};
    }
    std::size_t end = 1;
    while (end < args.size() && !std::isspace(static_cast<unsigned char>(args[end]))) {
        ++end;
    }
    return {std::string(args.substr(1, end - 1)), trim(args.substr(end))};
}

dwarf::format_letter letter_of(char c) {
    switch (c) {
    case 'x': return dwarf::format_letter::hex;
    case 'z': return dwarf::format_letter::zero_hex;
    case 'd': return dwarf::format_letter::decimal;
    case 'u': return dwarf::format_letter::unsigned_;
    case 'o': return dwarf::format_letter::octal;
    case 't': return dwarf::format_letter::binary;
    case 'c': return dwarf::format_letter::char_;
    case 'a': return dwarf::format_letter::address;
    case 'f': return dwarf::format_letter::float_;
    case 's': return dwarf::format_letter::string;
    default: break;
    }
    error::send(fmt::format("Undefined output format \"{}\".", c));
}

dwarf::format_options print_options(session& s, const std::string& fmtspec) {
    dwarf::format_options opts = s.settings().print;
    for (char c : fmtspec) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            error::send("Item count other than 1 is meaningless in \"print\" command.");
        }
        if (c == 'b' || c == 'h' || c == 'w' || c == 'g') {
            error::send(fmt::format("Size letters are meaningless in \"print\" command."));
        }
        if (c == 'i') {
            error::send("Format letter \"i\" is meaningless in \"print\" command.");
        }
        opts.letter = letter_of(c);
    }
    return opts;
}

// `print` and `call` (which prints nothing for a void result, as gdb's call_command).
void print_value(session& s, std::string_view args, bool is_call) {
    auto [fmtspec, expr] = split_format(args);
    dwarf::format_options opts = print_options(s, fmtspec);
    frame_context ctx = frame_context::for_selection(s);
    dwarf::value v;
    if (expr.empty()) {
        auto last = s.history(0);
        if (!last) {
            // gdb with an empty history prints nothing useful; say what is missing.
            error::send("History is empty.");
        }
        v = *last;
    } else {
        v = dwarf::evaluate(expr, ctx);
    }
    if (is_call && v.val_type.is_void() && v.synthetic_type_name.empty()) {
        return;
    }
    std::string text = dwarf::format_value(v, ctx, opts);
    int n = s.record_value(v);
    s.out().line(fmt::format("${} = {}", n, text));
    s.out().field("history", n);
    s.out().field("value", text);
    s.out().field("type", v.synthetic_type_name.empty() ? v.val_type.name() : v.synthetic_type_name);
}

void cmd_print(session& s, std::string_view args) { print_value(s, args, false); }

void cmd_output(session& s, std::string_view args) {
    auto [fmtspec, expr] = split_format(args);
    dwarf::format_options opts = print_options(s, fmtspec);
    frame_context ctx = frame_context::for_selection(s);
    if (expr.empty()) {
        error::send("Argument required (expression to compute).");
    }
    dwarf::value v = dwarf::evaluate(expr, ctx);
    s.out().partial(dwarf::format_value(v, ctx, opts));   // gdb's output leaves the line open
}

void cmd_ptype_whatis(session& s, std::string_view args, bool ptype) {
    auto [fmtspec, expr] = split_format(args);
    (void)fmtspec;
    if (expr.empty()) {
        error::send("Argument required (one or more choice items).");
    }
    frame_context ctx = frame_context::for_selection(s);
    std::string text = ptype ? dwarf::ptype_command(expr, ctx) : dwarf::whatis_command(expr, ctx);
    for (std::size_t pos = 0; pos <= text.size();) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) {
            s.out().line(std::string_view(text).substr(pos));
            break;
        }
        s.out().line(std::string_view(text).substr(pos, nl - pos));
        pos = nl + 1;
    }
}

void cmd_set_var(session& s, std::string_view args) {
    std::string_view expr = trim(args);
    if (expr.empty()) {
        error::send("Argument required (expression to compute).");
    }
    {
        frame_context ctx = frame_context::for_selection(s);
        dwarf::evaluate(expr, ctx);
    }
    // A register or stack slot written ($pc, a saved register) changes the frames: they are
    // unwound again when next asked, as gdb reinitialises its frame cache.
    s.current_inferior().stacks.clear();
}

// ---- x ----

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

std::uint64_t value_as_address(const dwarf::value& v) {
    dwarf::type t = v.val_type.strip_cv_typedef();
    if ((t.kind() == dwarf::type_kind::array || t.kind() == dwarf::type_kind::function) && v.address) {
        return *v.address;
    }
    return static_cast<std::uint64_t>(dwarf::as_integer(v));
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
void set_examined(std::uint64_t addr, const dwarf::type& unit, std::span<const std::byte> contents) {
    dwarf::value p;
    p.val_type = dwarf::type::pointer_to(unit);
    p.bytes.resize(8);
    std::memcpy(p.bytes.data(), &addr, 8);
    set_convenience_variable("_", p);
    if (contents.empty()) {
        set_convenience_variable("__", std::nullopt);
        return;
    }
    dwarf::value v;
    v.val_type = unit;
    v.bytes.assign(contents.begin(), contents.end());
    v.address = addr;
    set_convenience_variable("__", v);
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
            set_examined(addr, examined_type('x', 1), {});
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
            set_examined(addr, examined_type('x', 1), {});
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
        set_examined(addr + (count - 1) * size, examined_type(f, size), std::span<const std::byte>(last.data(), size));
    }
}

// ---- registers ----

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

// ---- info sharedlibrary / symbol / line / address ----

void cmd_info_sharedlibrary(session& s, std::string_view) {
    tracer::target* tgt = s.target();
    std::vector<const tracer::loaded_module*> libs;
    if (tgt != nullptr) {
        for (const tracer::loaded_module& m : tgt->modules()) {
            if (!m.is_executable) {
                libs.push_back(&m);
            }
        }
    }
    if (libs.empty()) {
        s.out().line("No shared libraries loaded at this time.");
        return;
    }
    s.out().line("From                To                  Syms Read   Shared Object Library");
    bool any_without_debug = false;
    for (const tracer::loaded_module* m : libs) {
        std::string from = "", to = "";
        bool debug = false;
        if (m->elf) {
            if (auto text = m->elf->section(".text")) {
                from = fmt::format("0x{:016x}", text->addr + m->load_bias);
                to = fmt::format("0x{:016x}", text->addr + text->size + m->load_bias);
            }
            debug = m->elf->has_debug_info();
        }
        std::string syms = m->elf ? (debug ? "Yes" : "Yes (*)") : "No";
        any_without_debug = any_without_debug || (m->elf && !debug);
        s.out().line(fmt::format("{:<20}{:<20}{:<12}{}", from, to, syms, m->path.string()));
    }
    if (any_without_debug) {
        s.out().line("(*): Shared library is missing debugging information.");
    }
}

void cmd_info_symbol(session& s, std::string_view args) {
    if (trim(args).empty()) {
        error::send("Argument required (address).");
    }
    frame_context ctx = frame_context::for_selection(s);
    std::uint64_t addr = value_as_address(dwarf::evaluate(trim(args), ctx));
    auto sym = symbolize_address(s, addr);
    if (!sym) {
        s.out().line(fmt::format("No symbol matches {}.", trim(args)));
        return;
    }
    std::string name = demangle(sym->name);
    std::string text = sym->offset == 0 ? name : fmt::format("{} + {}", name, sym->offset);
    text += fmt::format(" in section {}", sym->section);
    if (sym->module != nullptr && s.target() != nullptr && s.target()->modules().size() > 1) {
        text += fmt::format(" of {}", sym->module->path.string());
    }
    s.out().line(text);
}

void cmd_info_address(session& s, std::string_view args) {
    std::string_view name = trim(args);
    if (name.empty()) {
        error::send("Argument required.");
    }
    frame_context ctx = frame_context::for_selection(s);
    if (ctx.has_frame()) {
        for (const bool params : {true, false}) {
            for (const dwarf::variable& v : ctx.frame_variables(params)) {
                if (v.name == name) {
                    s.out().line(fmt::format("Symbol \"{}\" is a variable in the frame of its function.", name));
                    return;
                }
            }
        }
    }
    if (auto fn = ctx.lookup_function(name); fn && fn->address) {
        s.out().line(fmt::format("Symbol \"{}\" is a function at address 0x{:x}.", name, *fn->address));
        return;
    }
    if (auto v = ctx.lookup_variable(name); v && v->address) {
        s.out().line(fmt::format("Symbol \"{}\" is static storage at address 0x{:x}.", name, *v->address));
        return;
    }
    error::send(fmt::format("No symbol \"{}\" in current context.", name));
}

// ---- list ----

struct list_state {
    std::string file;
    int next_line = 0;
};

list_state& last_list() {
    static list_state st;
    return st;
}

void print_lines(session& s, const std::string& file, int first, int last) {
    std::ifstream in(file);
    if (!in) {
        error::send(fmt::format("{}: No such file or directory.", file));
    }
    std::string text;
    int n = 0;
    int printed = 0;
    while (std::getline(in, text)) {
        ++n;
        if (n >= first && n <= last) {
            s.out().line(fmt::format("{}\t{}", n, text));
            ++printed;
        }
        if (n > last) {
            break;
        }
    }
    if (printed == 0) {
        error::send(fmt::format("Line number {} out of range; \"{}\" has {} lines.", first, file, n));
    }
    last_list() = list_state{file, last + 1};
}

// The file and line a `list` argument names: LINE (in the file listed last or the
// selected frame's), FILE:LINE, or FUNCTION (the line of its first statement).
std::pair<std::string, int> list_location(session& s, std::string_view spec, const list_state& st) {
    frame_context ctx = frame_context::for_selection(s);
    std::string file;
    int line = 0;
    std::size_t colon = spec.rfind(':');
    auto as_int = [](std::string_view t) -> std::optional<int> {
        int v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || p != t.data() + t.size()) {
            return std::nullopt;
        }
        return v;
    };
    if (auto n = as_int(spec)) {
        line = *n;
        if (!st.file.empty()) {
            file = st.file;
        } else if (ctx.has_frame() && ctx.frame()->line) {
            file = ctx.frame()->line->file;
        }
    } else if (colon != std::string_view::npos && as_int(spec.substr(colon + 1))) {
        std::string_view want = spec.substr(0, colon);
        line = *as_int(spec.substr(colon + 1));
        // Resolve the file through the line tables of the program and its libraries.
        std::vector<std::shared_ptr<dwarf::elf_file>> elves;
        if (tracer::target* tgt = s.target()) {
            for (const tracer::loaded_module& m : tgt->modules()) {
                if (m.elf) {
                    elves.push_back(m.elf);
                }
            }
        } else if (s.program()) {
            elves.push_back(s.elf_for(*s.program()));
        }
        for (auto& e : elves) {
            dwarf::debug_info* dbg = e->debug();
            if (dbg == nullptr) {
                continue;
            }
            for (const std::string& f : dbg->source_files()) {
                if (f == want || (f.size() > want.size() && f.compare(f.size() - want.size(), want.size(), want) == 0 &&
                                  f[f.size() - want.size() - 1] == '/')) {
                    file = f;
                    break;
                }
            }
            if (!file.empty()) {
                break;
            }
        }
        if (file.empty()) {
            error::send(fmt::format("No source file named {}.", want));
        }
    } else {
        auto fn = ctx.lookup_function(spec);
        if (!fn || !fn->address) {
            error::send(fmt::format("Function \"{}\" not defined.", spec));
        }
        module_view mv = module_for(s, *fn->address);
        dwarf::debug_info* dbg = mv.elf ? mv.elf->debug() : nullptr;
        auto le = dbg ? dbg->line_at(*fn->address - mv.bias) : std::nullopt;
        if (!le) {
            error::send(fmt::format("No line number known for {}.", spec));
        }
        file = le->file;
        line = le->line;
    }
    if (file.empty()) {
        error::send("No symbol table is loaded.  Use the \"file\" command.");
    }
    return {file, line};
}

void cmd_list(session& s, std::string_view args) {
    std::string_view spec = trim(args);
    list_state& st = last_list();
    // gdb's `set listsize`: lines per list (0: unlimited), centred with half of them before.
    const int size = s.settings().listsize > 0 ? s.settings().listsize : INT_MAX / 2;
    const int before = size / 2;
    if (spec.empty()) {
        if (!st.file.empty()) {
            print_lines(s, st.file, st.next_line, st.next_line + size - 1);
            return;
        }
        frame_context ctx = frame_context::for_selection(s);
        if (ctx.has_frame() && ctx.frame()->line) {
            int center = ctx.frame()->line->line;
            int first = std::max(1, center - before);
            print_lines(s, ctx.frame()->line->file, first, first + size - 1);
            return;
        }
        spec = "main";
    }
    // gdb's "list FIRST,LAST", "list FIRST," (ten lines from FIRST), "list ,LAST" (ten
    // lines ending at LAST).
    if (auto comma = spec.find(','); comma != std::string_view::npos) {
        std::string_view a = trim(spec.substr(0, comma));
        std::string_view b = trim(spec.substr(comma + 1));
        if (!a.empty()) {
            auto [file, first] = list_location(s, a, st);
            int last = first + size - 1;
            if (!b.empty()) {
                last = list_location(s, b, list_state{file, 0}).second;
            }
            print_lines(s, file, first, last);
        } else if (!b.empty()) {
            auto [file, last] = list_location(s, b, st);
            print_lines(s, file, std::max(1, last - size + 1), last);
        }
        return;
    }
    auto [file, line] = list_location(s, spec, st);
    int first = std::max(1, line - before);
    print_lines(s, file, first, first + size - 1);
}

}  // namespace

void register_data_commands(command_table& t) {
    t.add(command{"print", {"p", "inspect"}, "Print value of expression EXP.",
                  "print[/FMT] EXP\nEvaluate EXP in the selected frame and print it as $N = value.\n"
                  "FMT is one of x d u o t c a f s.",
                  cmd_print, false, nullptr});
    t.add(command{"call", {}, "Call a function in the program.",
                  "call[/FMT] EXP\nEvaluate EXP, calling the program's functions in it, and print the value "
                  "unless it is void.",
                  [](session& s, std::string_view a) { print_value(s, a, true); }, false, nullptr});
    t.add(command{"output", {}, "Like \"print\" but don't put in value history and don't print newline.",
                  "output[/FMT] EXP", cmd_output, false, nullptr});
    t.add(command{"ptype", {}, "Print definition of type TYPE.",
                  "ptype EXP|TYPE\nPrint the full definition of a type or of an expression's type.",
                  [](session& s, std::string_view a) { cmd_ptype_whatis(s, a, true); }, false, nullptr});
    t.add(command{"whatis", {}, "Print data type of expression EXP.",
                  "whatis EXP|TYPE\nPrint the type of an expression (one typedef level for a type name).",
                  [](session& s, std::string_view a) { cmd_ptype_whatis(s, a, false); }, false, nullptr});
    t.add(command{"x", {}, "Examine memory: x/FMT ADDRESS.",
                  "x/NFU ADDRESS\nN count, F format (x d u o t a c f s i z), U unit (b h w g).\n"
                  "Without ADDRESS continues after the last address examined.",
                  cmd_x, true, nullptr});
    t.add(command{"list", {"l"}, "List specified function or line.",
                  "list [LINE | FUNCTION | FILE:LINE]\nPrint ten source lines around the location; "
                  "without argument continue after the last lines printed.",
                  cmd_list, true, nullptr});

    command_table& set = t.prefix("set", {}, "Evaluate expression EXP and assign result to variable VAR.");
    set.add(command{"variable", {"var"}, "Evaluate expression EXP and assign result to variable VAR.",
                    "set variable VAR = EXP", cmd_set_var, false, nullptr});

    command_table& info = t.prefix("info", {}, "Generic command for showing things about the program being debugged.");
    info.add(command{"registers", {"r"}, "List of integer registers and their contents.",
                     "info registers [REG...]\nPrint the general registers of the selected frame.",
                     cmd_info_registers, false, nullptr});
    info.add(command{"sharedlibrary", {"dll"}, "Status of loaded shared object libraries.",
                     "info sharedlibrary", cmd_info_sharedlibrary, false, nullptr});
    info.add(command{"symbol", {}, "Describe what symbol is at location ADDR.",
                     "info symbol ADDR", cmd_info_symbol, false, nullptr});
    info.add(command{"address", {}, "Describe where symbol SYM is stored.",
                     "info address SYM", cmd_info_address, false, nullptr});
}

}  // namespace ompdbg::app
