// The scalar pieces of a printed value as gdb 13 spells them (valprint.c generic_printstr,
// print_wchar): hex numbers, char and string literals with their escapes and repeats,
// floats, and enums (flag enums as (A | B | unknown: 0x..)).

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "internal/value_literals.hpp"
#include "internal/value_util.hpp"

namespace ompdbg::dwarf::detail {
namespace {

// One character of a string or char literal, escaped as gdb's print_wchar does in the C
// locale: named escapes, the active quote and backslash escaped, the rest octal.
void put_char(std::string& out, std::uint32_t c, char quote) {
    switch (c) {
        case '\a':
            out += "\\a";
            return;
        case '\b':
            out += "\\b";
            return;
        case '\f':
            out += "\\f";
            return;
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        case '\v':
            out += "\\v";
            return;
        default:
            break;
    }
    if (c >= 0x20 && c < 0x7f) {
        if (c == static_cast<unsigned char>(quote) || c == '\\') {
            out += '\\';
        }
        out += static_cast<char>(c);
        return;
    }
    // gdb: octal when it fits in three digits, else a hex escape (wide characters).
    char buf[16];
    if (c <= 0777) {
        std::snprintf(buf, sizeof buf, "\\%03o", c);
    } else {
        std::snprintf(buf, sizeof buf, "\\x%x", c);
    }
    out += buf;
}


bool is_flag_enum(const std::vector<enumerator>& es) {
    std::uint64_t mask = 0;
    for (auto& e : es) {
        if (e.value < 0) {
            return false;
        }
        auto u = static_cast<std::uint64_t>(e.value);
        if (mask & u) {
            return false;
        }
        mask |= u;
    }
    return true;
}


}  // namespace

std::string hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}


std::string char_literal(std::uint32_t c, const std::string& prefix) {
    std::string out = prefix + "'";
    put_char(out, c, '\'');
    return out + "'";
}

// gdb's generic_printstr: runs longer than the repeat threshold become
// 'c' <repeats N times>, the rest is quoted; at most `limit` characters, then "...".
std::string print_string(const std::vector<std::uint32_t>& s, std::size_t limit, std::size_t repeat_threshold,
                         bool force_ellipses, const std::string& prefix) {
    if (s.empty()) {
        return prefix + (force_ellipses ? "\"\"..." : "\"\"");
    }
    std::string out;
    enum { start, single, repeat } last = start;
    std::size_t i = 0;
    std::size_t printed = 0;
    while (i < s.size() && printed < limit) {
        std::size_t j = i + 1;
        while (j < s.size() && s[j] == s[i]) {
            ++j;
        }
        std::size_t reps = j - i;
        if (reps > repeat_threshold) {
            if (last == single) {
                out += '"';
            }
            if (last != start) {
                out += ", ";
            }
            out += char_literal(s[i], prefix) + " <repeats " + std::to_string(reps) + " times>";
            last = repeat;
        } else {
            if (last != single) {
                if (last != start) {
                    out += ", ";
                }
                out += prefix + '"';
            }
            for (std::size_t k = 0; k < reps; ++k) {
                put_char(out, s[i], '"');
            }
            last = single;
        }
        printed += reps;
        i = j;
    }
    if (last == single) {
        out += '"';
    }
    if (force_ellipses || i < s.size()) {
        out += "...";
    }
    return out;
}

std::string format_float(const value& v) {
    auto n = v.val_type.size();
    long double f = detail::to_float(v);
    if (std::isinf(f)) {
        return f < 0 ? "-inf" : "inf";
    }
    if (std::isnan(f)) {
        std::uint64_t mant = 0;
        bool neg = false;
        if (n == 4) {
            std::uint32_t b;
            std::memcpy(&b, v.bytes.data(), 4);
            mant = b & 0x7fffff;
            neg = b >> 31;
        } else if (n == 8) {
            std::uint64_t b;
            std::memcpy(&b, v.bytes.data(), 8);
            mant = b & 0xfffffffffffffULL;
            neg = b >> 63;
        } else {
            std::memcpy(&mant, v.bytes.data(), 8);
            mant &= 0x3fffffffffffffffULL;
            neg = (static_cast<unsigned>(v.bytes[9]) & 0x80) != 0;
        }
        return std::string(neg ? "-" : "") + "nan(" + hex(mant) + ")";
    }
    char buf[64];
    if (n == 4) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
    } else if (n == 8) {
        std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(f));
    } else {
        std::snprintf(buf, sizeof buf, "%.21Lg", f);
    }
    return buf;
}

// gdb's quote prefix for C++ character types: u'x' (char16_t), U'x' (char32_t), L'x'.
std::optional<std::string> wide_prefix(const type& t) {
    auto s = t.strip_cv_typedef();
    if (s.kind() != type_kind::base) {
        return std::nullopt;
    }
    std::string n = s.name();
    if (n == "char16_t") {
        return "u";
    }
    if (n == "char32_t") {
        return "U";
    }
    if (n == "wchar_t") {
        return "L";
    }
    return std::nullopt;
}

std::string format_enum(const value& v) {
    auto es = v.val_type.enumerators();
    std::int64_t val = to_int(v);
    for (auto& e : es) {
        if (e.value == val) {
            return e.name;
        }
    }
    if (!is_flag_enum(es)) {
        return std::to_string(val);
    }
    auto u = static_cast<std::uint64_t>(val);
    std::string out;
    for (auto& e : es) {
        auto ev = static_cast<std::uint64_t>(e.value);
        if (ev != 0 && (u & ev) == ev) {
            out += out.empty() ? "(" : " | ";
            out += e.name;
            u &= ~ev;
        }
    }
    if (u != 0) {
        out += out.empty() ? "(unknown: " : " | unknown: ";
        out += hex(u) + ")";
    } else if (out.empty()) {
        out = "0";
    } else {
        out += ")";
    }
    return out;
}

}  // namespace ompdbg::dwarf::detail
