#include "internal/value_util.hpp"

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf::detail {
namespace {

// Canonical spelling of a C base type written with keywords in any order
// ("long unsigned int" → "unsigned long"); empty when the words are not a base type.
std::string canonical_builtin(std::string_view name) {
    std::istringstream in{std::string(name)};
    std::string w;
    int longs = 0;
    bool is_unsigned = false;
    bool is_signed = false;
    bool is_short = false;
    std::string core;
    int words = 0;
    while (in >> w) {
        ++words;
        if (w == "long") {
            ++longs;
        } else if (w == "unsigned") {
            is_unsigned = true;
        } else if (w == "signed") {
            is_signed = true;
        } else if (w == "short") {
            is_short = true;
        } else if (w == "int" || w == "char" || w == "double" || w == "float" || w == "void" ||
                   w == "_Bool" || w == "bool" || w == "__int128") {
            if (!core.empty()) {
                return "";
            }
            core = w;
        } else {
            return "";
        }
    }
    if (words == 0) {
        return "";
    }
    if (core == "void" || core == "_Bool" || core == "bool" || core == "float") {
        return words == 1 ? core : "";
    }
    if (core == "double") {
        if (longs == 1 && words == 2) {
            return "long double";
        }
        return words == 1 ? core : "";
    }
    if (core == "char") {
        if (longs || is_short) {
            return "";
        }
        return is_unsigned ? "unsigned char" : is_signed ? "signed char" : "char";
    }
    if (core == "__int128") {
        return is_unsigned ? "unsigned __int128" : "__int128";
    }
    std::string base = is_short ? "short" : longs == 1 ? "long" : longs >= 2 ? "long long" : "int";
    return is_unsigned ? "unsigned " + base : base;
}

}  // namespace

std::optional<type> builtin_type(std::string_view name) {
    static const std::map<std::string, std::pair<std::uint64_t, base_encoding>> table = {
        {"char", {1, base_encoding::signed_char}},
        {"signed char", {1, base_encoding::signed_char}},
        {"unsigned char", {1, base_encoding::unsigned_char}},
        {"short", {2, base_encoding::signed_int}},
        {"unsigned short", {2, base_encoding::unsigned_int}},
        {"int", {4, base_encoding::signed_int}},
        {"unsigned int", {4, base_encoding::unsigned_int}},
        {"long", {8, base_encoding::signed_int}},
        {"unsigned long", {8, base_encoding::unsigned_int}},
        {"long long", {8, base_encoding::signed_int}},
        {"unsigned long long", {8, base_encoding::unsigned_int}},
        {"__int128", {16, base_encoding::signed_int}},
        {"unsigned __int128", {16, base_encoding::unsigned_int}},
        {"float", {4, base_encoding::floating}},
        {"double", {8, base_encoding::floating}},
        {"long double", {16, base_encoding::floating}},
        {"_Bool", {1, base_encoding::boolean}},
        {"bool", {1, base_encoding::boolean}},
    };
    std::string canon = canonical_builtin(name);
    if (canon.empty()) {
        return std::nullopt;
    }
    if (canon == "void") {
        return type();
    }
    auto it = table.find(canon);
    if (it == table.end()) {
        return std::nullopt;
    }
    return type::make_base(canon, it->second.first, it->second.second);
}

type int_type() { return *builtin_type("int"); }
type long_type() { return *builtin_type("long"); }
type ulong_type() { return *builtin_type("unsigned long"); }
type double_type() { return *builtin_type("double"); }
type char_type() { return *builtin_type("char"); }
type bool_type() { return *builtin_type("bool"); }

void check_value_size(std::uint64_t n) {
    if (n > max_value_size) {
        error::send("value requires " + std::to_string(n) +
                    " bytes, which is more than max-value-size");
    }
}

void fetch(value& v, eval_context& ctx) {
    if (v.optimized_out || !v.bytes.empty() || !v.address) {
        return;
    }
    std::uint64_t n = v.bit_size ? (v.bit_offset + *v.bit_size + 7) / 8 : v.val_type.size();
    if (n == 0) {
        return;
    }
    check_value_size(n);
    v.bytes.resize(n);
    try {
        ctx.read_memory(*v.address, v.bytes);
    } catch (...) {
        v.bytes.clear();
        throw;
    }
}

// An optimized-out value has no contents: an operation that needs them fails as in gdb,
// instead of computing with zeros.
void check_available(const value& v) {
    if (v.optimized_out) {
        error::send("value has been optimized out");
    }
}

std::uint64_t raw_bits(const value& v) {
    check_available(v);
    std::uint64_t out = 0;
    std::size_t n = std::min<std::size_t>(v.bytes.size(), 8);
    std::memcpy(&out, v.bytes.data(), n);
    if (v.bit_size) {
        out >>= v.bit_offset;
        if (*v.bit_size < 64) {
            out &= (std::uint64_t{1} << *v.bit_size) - 1;
        }
    }
    return out;
}

unsigned bit_width(const value& v) {
    if (v.bit_size) {
        return *v.bit_size;
    }
    auto n = std::min<std::uint64_t>(v.val_type.size(), 8);
    return static_cast<unsigned>(n * 8);
}

bool is_signed(const type& t) {
    auto e = t.encoding();
    return e == base_encoding::signed_int || e == base_encoding::signed_char;
}

std::int64_t to_int(const value& v) {
    std::uint64_t bits = raw_bits(v);
    unsigned w = bit_width(v);
    if (is_signed(v.val_type) && w > 0 && w < 64 && ((bits >> (w - 1)) & 1)) {
        bits |= ~((std::uint64_t{1} << w) - 1);
    }
    return static_cast<std::int64_t>(bits);
}

long double to_float(const value& v) {
    check_available(v);
    auto n = v.val_type.size();
    if (n == 4 && v.bytes.size() >= 4) {
        float f;
        std::memcpy(&f, v.bytes.data(), 4);
        return f;
    }
    if (n == 8 && v.bytes.size() >= 8) {
        double d;
        std::memcpy(&d, v.bytes.data(), 8);
        return d;
    }
    if (n >= 10 && v.bytes.size() >= 10) {
        long double ld = 0;
        std::memcpy(&ld, v.bytes.data(), 10);
        return ld;
    }
    return 0;
}

std::uint64_t float_to_bits(long double f) {
    if (f != f) {
        return 0;
    }
    if (f >= 18446744073709551616.0L) {
        return ~std::uint64_t{0};
    }
    if (f <= -9223372036854775808.0L) {
        return std::uint64_t{1} << 63;
    }
    if (f < 0) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(f));
    }
    return static_cast<std::uint64_t>(f);
}

bool is_integral(const type& t) {
    auto s = t.strip_cv_typedef();
    auto k = s.kind();
    if (k == type_kind::enumeration) {
        return true;
    }
    if (k != type_kind::base) {
        return false;
    }
    auto e = s.encoding();
    return e != base_encoding::floating && e != base_encoding::other;
}

bool is_floating(const type& t) {
    auto s = t.strip_cv_typedef();
    return s.kind() == type_kind::base && s.encoding() == base_encoding::floating;
}

bool is_pointer(const type& t) { return t.strip_cv_typedef().kind() == type_kind::pointer; }

value make_int(const type& t, std::uint64_t v) {
    value out;
    out.val_type = t;
    out.synthetic_type_name = t.is_synthetic() ? t.name() : "";
    auto n = t.size();
    out.bytes.resize(n);
    std::memcpy(out.bytes.data(), &v, std::min<std::size_t>(n, 8));
    if (n > 8 && static_cast<std::int64_t>(v) < 0 && is_signed(t)) {
        for (std::size_t i = 8; i < n; ++i) {
            out.bytes[i] = std::byte{0xff};
        }
    }
    return out;
}

value make_float(const type& t, long double v) {
    value out;
    out.val_type = t;
    out.synthetic_type_name = t.is_synthetic() ? t.name() : "";
    auto n = t.size();
    out.bytes.resize(n);
    if (n == 4) {
        float f = static_cast<float>(v);
        std::memcpy(out.bytes.data(), &f, 4);
    } else if (n == 8) {
        double d = static_cast<double>(v);
        std::memcpy(out.bytes.data(), &d, 8);
    } else if (n >= 10) {
        std::memcpy(out.bytes.data(), &v, std::min<std::size_t>(n, sizeof(v)));
    }
    return out;
}

value component(const value& parent, const type& t, std::uint64_t byte_off) {
    value out;
    out.val_type = t;
    out.synthetic_type_name = t.is_synthetic() ? t.name() : "";
    out.optimized_out = parent.optimized_out;
    auto n = t.size();
    if (!parent.bytes.empty()) {
        if (byte_off + n > parent.bytes.size()) {
            error::send("value is not available");
        }
        out.bytes.assign(parent.bytes.begin() + static_cast<std::ptrdiff_t>(byte_off),
                         parent.bytes.begin() + static_cast<std::ptrdiff_t>(byte_off + n));
    }
    if (parent.address) {
        out.address = *parent.address + byte_off;
    }
    return out;
}

value member_value(const value& parent, const member& m) {
    if (!m.bit_size) {
        return component(parent, m.get_type(), m.byte_offset);
    }
    value out;
    out.val_type = m.get_type();
    out.optimized_out = parent.optimized_out;
    out.bit_size = m.bit_size;
    out.bit_offset = m.bit_offset;
    std::uint64_t n = (m.bit_offset + *m.bit_size + 7) / 8;
    if (!parent.bytes.empty()) {
        std::uint64_t end = std::min<std::uint64_t>(m.byte_offset + n, parent.bytes.size());
        if (m.byte_offset > end) {
            error::send("value is not available");
        }
        out.bytes.assign(parent.bytes.begin() + static_cast<std::ptrdiff_t>(m.byte_offset),
                         parent.bytes.begin() + static_cast<std::ptrdiff_t>(end));
    }
    if (parent.address) {
        out.address = *parent.address + m.byte_offset;
    }
    return out;
}

value lvalue_at(const type& t, std::uint64_t addr) {
    value out;
    out.val_type = t;
    out.synthetic_type_name = t.is_synthetic() ? t.name() : "";
    out.address = addr;
    return out;
}

value deref_reference(const value& v, eval_context& ctx) {
    auto s = v.val_type.strip_cv_typedef();
    if (s.kind() != type_kind::reference && s.kind() != type_kind::rvalue_reference) {
        return v;
    }
    value copy = v;
    fetch(copy, ctx);
    std::uint64_t addr = raw_bits(copy);
    value out = lvalue_at(s.target().value_or(type()), addr);
    fetch(out, ctx);
    return out;
}

}  // namespace ompdbg::dwarf::detail
