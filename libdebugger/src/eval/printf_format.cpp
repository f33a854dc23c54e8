#include "ompdbg/debugger/eval/printf_format.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

namespace {

/// The C string literal at the start of `in` (after blanks), its escapes decoded; `in` is
/// left after the closing quote.
std::string take_format_string(std::string_view& in) {
    std::size_t i = in.find_first_not_of(" \t");
    if (i == std::string_view::npos || in[i] != '"') {
        error::send("Bad format string, missing '\"'.");
    }
    std::string out;
    for (++i;; ++i) {
        if (i >= in.size()) {
            error::send("Bad format string, non-terminated '\"'.");
        }
        char c = in[i];
        if (c == '"') {
            break;
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= in.size()) {
            error::send("Bad format string, non-terminated '\"'.");
        }
        switch (char e = in[i]) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'e': out += '\033'; break;
        case '\\': case '"': case '\'': out += e; break;
        default:   // gdb 13 knows no octal or hex escapes here either
            error::send(fmt::format("Unrecognized escape character \\{} in format string.", e));
        }
    }
    in.remove_prefix(i + 1);
    return out;
}

/// Splits the expressions after the format at the commas outside (), [], {} and quotes.
std::vector<std::string> split_expressions(std::string_view in) {
    std::vector<std::string> out;
    std::size_t i = in.find_first_not_of(" \t");
    if (i == std::string_view::npos) {
        return out;
    }
    if (in[i] != ',') {
        error::send("Invalid argument syntax");
    }
    std::string cur;
    int depth = 0;
    char quote = 0;
    auto flush = [&] {
        auto b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
        if (b == std::string::npos) {
            error::send("Invalid argument syntax");   // an empty expression between commas
        }
        out.push_back(cur.substr(b, e - b + 1));
        cur.clear();
    };
    for (++i; i < in.size(); ++i) {
        char c = in[i];
        if (quote) {
            cur += c;
            if (c == '\\' && i + 1 < in.size()) {
                cur += in[++i];
            } else if (c == quote) {
                quote = 0;
            }
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == ')' || c == ']' || c == '}') {
            --depth;
        } else if (c == ',' && depth == 0) {
            flush();
            continue;
        }
        cur += c;
    }
    flush();
    return out;
}

/// The pieces of a decoded format: literal runs and conversions (gdb's format_pieces).
std::vector<printf_piece> split_format(const std::string& f) {
    std::vector<printf_piece> pieces;
    std::string literal;
    for (std::size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '%') {
            literal += f[i];
            continue;
        }
        if (i + 1 < f.size() && f[i + 1] == '%') {
            literal += '%';
            ++i;
            continue;
        }
        printf_piece p;
        std::size_t j = i + 1;
        while (j < f.size() && std::strchr("-+ #0'", f[j]) != nullptr) {
            p.text += f[j++];
        }
        while (j < f.size() && (std::isdigit(static_cast<unsigned char>(f[j])) || f[j] == '.')) {
            p.text += f[j++];
        }
        if (j < f.size() && f[j] == '*') {
            error::send("`*' not supported for precision or width in printf");
        }
        // gdb 13 takes one h but not hh: "Unrecognized format specifier 'h' in printf".
        for (const char* len : {"ll", "l", "L", "z", "j", "t", "h"}) {
            if (f.compare(j, std::strlen(len), len) == 0) {
                p.length = len;
                j += p.length.size();
                break;
            }
        }
        if (j >= f.size()) {
            error::send("Incomplete format specifier at end of format string");
        }
        char c = f[j];
        if (c == 'n') {
            error::send("Format specifier `n' not supported in printf");
        }
        if (std::strchr("diuoxXcsfFeEgGaAp", c) == nullptr) {
            error::send(fmt::format("Unrecognized format specifier '{}' in printf", c));
        }
        p.conversion = c;
        if (!literal.empty()) {
            pieces.push_back(printf_piece{literal, {}, 0});
            literal.clear();
        }
        pieces.push_back(p);
        i = j;
    }
    if (!literal.empty()) {
        pieces.push_back(printf_piece{literal, {}, 0});
    }
    return pieces;
}

/// The bytes of `v`, read through ctx when it is a lazy lvalue.
std::vector<std::byte> bytes_of(const dwarf::value& v, dwarf::eval_context& ctx) {
    if (!v.bytes.empty() || !v.address) {
        return v.bytes;
    }
    std::vector<std::byte> b(v.val_type.size());
    ctx.read_memory(*v.address, b);
    return b;
}

bool is_floating(const dwarf::value& v) {
    auto t = v.val_type.strip_cv_typedef();
    return t.kind() == dwarf::type_kind::base && t.encoding() == dwarf::base_encoding::floating;
}

long double as_long_double(const dwarf::value& v, dwarf::eval_context& ctx) {
    if (!is_floating(v)) {
        return static_cast<long double>(dwarf::as_integer(v));
    }
    auto b = bytes_of(v, ctx);
    if (b.size() == 4) {
        float f;
        std::memcpy(&f, b.data(), 4);
        return f;
    }
    if (b.size() == 8) {
        double d;
        std::memcpy(&d, b.data(), 8);
        return d;
    }
    if (b.size() >= 10) {
        long double ld = 0;
        std::memcpy(&ld, b.data(), 10);   // x87 extended precision, the rest is padding
        return ld;
    }
    error::send("Value can't be converted to float.");
}

std::int64_t as_int(const dwarf::value& v, dwarf::eval_context& ctx) {
    if (is_floating(v)) {
        return static_cast<std::int64_t>(as_long_double(v, ctx));
    }
    return dwarf::as_integer(v);
}

/// The C string `v` holds (char array) or points to, read up to its NUL.
std::optional<std::string> string_of(const dwarf::value& v, dwarf::eval_context& ctx) {
    auto t = v.val_type.strip_cv_typedef();
    if (t.kind() == dwarf::type_kind::array) {
        auto b = bytes_of(v, ctx);
        std::string s(reinterpret_cast<const char*>(b.data()), b.size());
        return s.substr(0, s.find('\0'));
    }
    auto addr = static_cast<std::uint64_t>(dwarf::as_integer(v));
    if (addr == 0) {
        return std::nullopt;
    }
    std::string s;
    std::byte chunk[64];
    for (std::uint64_t at = addr; s.size() < (1u << 20); at += sizeof chunk) {
        // Byte by byte at the end of a mapping: a whole chunk may cross into nothing.
        try {
            ctx.read_memory(at, chunk);
        } catch (const std::exception&) {
            for (std::uint64_t a = at;; ++a) {
                std::byte one[1];
                ctx.read_memory(a, one);   // throws "Cannot access memory at address 0x..."
                if (one[0] == std::byte{0}) {
                    return s;
                }
                s += static_cast<char>(one[0]);
            }
        }
        for (std::byte c : chunk) {
            if (c == std::byte{0}) {
                return s;
            }
            s += static_cast<char>(c);
        }
    }
    return s;
}

template <typename... Args>
std::string c_format(const std::string& spec, Args... args) {
    int n = std::snprintf(nullptr, 0, spec.c_str(), args...);
    if (n < 0) {
        error::send("Bad format string");
    }
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(out.data(), out.size(), spec.c_str(), args...);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

bool is_long(const std::string& length) {
    return length == "l" || length == "ll" || length == "z" || length == "j" || length == "t";
}

}  // namespace

printf_request parse_printf(std::string_view args) {
    if (args.find_first_not_of(" \t") == std::string_view::npos) {
        error::send("Argument required (format-control string and values to print).");
    }
    std::string_view rest = args;
    printf_request r;
    r.pieces = split_format(take_format_string(rest));
    r.expressions = split_expressions(rest);
    std::size_t conversions = 0;
    for (const auto& p : r.pieces) {
        conversions += p.conversion != 0;
    }
    if (conversions != r.expressions.size()) {
        error::send("Wrong number of arguments for specified format-string");
    }
    return r;
}

std::string format_printf_value(const printf_piece& p, const dwarf::value& v, dwarf::eval_context& ctx) {
    const std::string flags = "%" + p.text;
    switch (p.conversion) {
    case 'd':
    case 'i':
        if (is_long(p.length)) {
            return c_format(flags + "ll" + p.conversion, static_cast<long long>(as_int(v, ctx)));
        }
        return c_format(flags + p.length + p.conversion, static_cast<int>(as_int(v, ctx)));
    case 'u':
    case 'o':
    case 'x':
    case 'X':
        if (is_long(p.length)) {
            return c_format(flags + "ll" + p.conversion, static_cast<unsigned long long>(as_int(v, ctx)));
        }
        return c_format(flags + p.length + p.conversion, static_cast<unsigned>(as_int(v, ctx)));
    case 'c':
        return c_format(flags + "c", static_cast<int>(as_int(v, ctx)));
    case 's': {
        auto s = string_of(v, ctx);
        return c_format(flags + "s", s ? s->c_str() : "(null)");
    }
    case 'p': {
        // gdb: %p as glibc prints it, whatever the host's pointers: 0x... or (nil).
        std::string width;
        for (char c : p.text) {
            if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
                width += c;
            }
        }
        auto u = static_cast<unsigned long long>(dwarf::as_integer(v));
        return u == 0 ? c_format("%" + width + "s", "(nil)") : c_format("%#" + width + "llx", u);
    }
    default:   // f F e E g G a A
        if (p.length == "L") {
            return c_format(flags + "L" + p.conversion, as_long_double(v, ctx));
        }
        return c_format(flags + p.conversion, static_cast<double>(as_long_double(v, ctx)));
    }
}

std::string format_printf(const printf_request& request, dwarf::eval_context& ctx) {
    // Every value first, as gdb: an error prints nothing of the line.
    std::vector<dwarf::value> values;
    for (const auto& e : request.expressions) {
        values.push_back(dwarf::evaluate(e, ctx));
    }
    std::string out;
    std::size_t next = 0;
    for (const auto& p : request.pieces) {
        out += p.conversion == 0 ? p.text : format_printf_value(p, values[next++], ctx);
    }
    return out;
}

}  // namespace ompdbg::debugger
