// format_value: values printed byte for byte as gdb 13's C/C++ value printer does
// (c-valprint.c, valprint.c generic_printstr, print_scalar_formatted). The scalar pieces
// (hex, char and string literals, floats, enums) are spelled in value_literals.cpp.

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "internal/std_printers.hpp"
#include "internal/value_literals.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {
namespace {

using detail::fetch;
using detail::raw_bits;
using detail::to_int;
using detail::char_literal;
using detail::format_enum;
using detail::format_float;
using detail::hex;
using detail::print_string;
using detail::wide_prefix;

class printer {
public:
    printer(eval_context& ctx, const format_options& opts) : ctx_(ctx), opts_(opts) {}

    std::string top(value v) {
        if (v.optimized_out) {
            return "<optimized out>";
        }
        auto s = v.val_type.strip_cv_typedef();
        auto k = s.kind();
        if (k == type_kind::pointer || k == type_kind::reference ||
            k == type_kind::rvalue_reference) {
            // gdb drops "(char *)" because the quoted string shows the type: only for an
            // unnamed pointer to plain (cv-qualified) `char`, not typedefs or signed char.
            bool textual_char_ptr = false;
            type top = v.val_type;
            while (top.kind() == type_kind::const_ || top.kind() == type_kind::volatile_) {
                top = top.target().value_or(type());
            }
            if (top.kind() == type_kind::pointer) {
                auto target = top.target().value_or(type());
                while (target.kind() == type_kind::const_ || target.kind() == type_kind::volatile_) {
                    target = target.target().value_or(type());
                }
                textual_char_ptr = target.kind() == type_kind::base && target.name() == "char";
            }
            if (opts_.letter != format_letter::natural && k == type_kind::pointer) {
                return any(v);
            }
            if (!textual_char_ptr) {
                return "(" + v.val_type.name() + ") " + any(v);
            }
        }
        if (k == type_kind::function || is_nodebug_function(s)) {
            return "{" + v.val_type.name() + "} " + code_address(v.address.value_or(0));
        }
        return any(v);
    }

    std::string any(value v) {
        if (v.optimized_out) {
            return "<optimized out>";
        }
        auto s = v.val_type.strip_cv_typedef();
        switch (s.kind()) {
            case type_kind::void_:
                return "void";
            case type_kind::structure:
            case type_kind::class_:
            case type_kind::union_:
                if (s.is_declaration()) {
                    return "<incomplete type>";
                }
                fetch(v, ctx_);
                if (auto pretty = libstdcxx(v, s)) {
                    return *pretty;
                }
                return structure(v, s);
            case type_kind::array:
                fetch(v, ctx_);
                return array(v, s);
            case type_kind::reference:
            case type_kind::rvalue_reference: {
                fetch(v, ctx_);
                std::uint64_t addr = raw_bits(v);
                std::string out = "@" + hex(addr);
                if (depth_ > 0) {
                    // Inside aggregates gdb shows only where a reference points.
                    return out;
                }
                out += ": ";
                try {
                    value target = detail::lvalue_at(s.target().value_or(type()), addr);
                    fetch(target, ctx_);
                    return out + any(target);
                } catch (const ompdbg::error& e) {
                    return out + "<error: " + e.what() + ">";
                }
            }
            case type_kind::function:
                return "{" + v.val_type.name() + "} " + code_address(v.address.value_or(0));
            default:
                if (is_nodebug_function(s)) {
                    return "{" + v.val_type.name() + "} " + code_address(v.address.value_or(0));
                }
                break;
        }
        fetch(v, ctx_);
        return scalar(v, s);
    }

private:
    std::string code_address(std::uint64_t addr) {
        std::string sym = ctx_.symbolize(addr);
        return hex(addr) + (sym.empty() ? "" : " " + sym);
    }

    // gdb's print_children for the libstdc++ printers: "summary = {children}", values only
    // for an 'array' hint, "[key] = value" pairs for a 'map' hint, "name = value" otherwise.
    std::optional<std::string> libstdcxx(const value& v, const type& s) {
        std::optional<detail::pretty_value> pv;
        try {
            pv = detail::libstdcxx_pretty(v, s, ctx_, opts_.max_elements);
        } catch (const ompdbg::error&) {
            return std::nullopt;   // unreadable innards: the raw structure says what is there
        }
        if (!pv) {
            return std::nullopt;
        }
        using hint = detail::pretty_value::hint;
        if (pv->display == hint::string) {
            return print_string(pv->text, opts_.max_string, opts_.repeat_threshold, pv->more_children);
        }
        std::string out = pv->summary;
        if (pv->children.empty()) {
            return out;
        }
        nested guard(depth_);
        // Pretty: an 'array' stays on one line, other children one per line (pairs for a map).
        const bool own_lines = opts_.pretty && pv->display != hint::array;
        const std::string pad = "\n" + std::string(2 * static_cast<std::size_t>(depth_), ' ');
        out += " = {";
        for (std::size_t i = 0; i < pv->children.size(); ++i) {
            const auto& child = pv->children[i];
            if (i != 0 && (pv->display != hint::map || i % 2 == 0)) {
                out += own_lines ? "," : ", ";
            }
            if (own_lines && (pv->display != hint::map || i % 2 == 0)) {
                out += pad;
            }
            if (pv->display == hint::map) {
                out += i % 2 == 0 ? "[" + any(child.val) + "] = " : any(child.val);
            } else if (pv->display == hint::array) {
                out += any(child.val);
            } else {
                out += child.name + " = " + any(child.val);
            }
        }
        out += pv->more_children ? "..." : "";
        if (own_lines) {
            out += "\n" + std::string(2 * static_cast<std::size_t>(depth_ - 1), ' ');
        }
        return out + "}";
    }

    // gdb's cp_print_value_fields. With `set print pretty on` every field goes on its own line,
    // indented two spaces per nesting level, and a class with bases says where its own
    // members start ("members of derived:").
    std::string structure(const value& v, const type& s) {
        nested guard(depth_);
        const bool pretty = opts_.pretty;
        const std::string pad = "\n" + std::string(2 * static_cast<std::size_t>(depth_), ' ');
        auto members = s.members();
        std::string out = "{";
        bool any_field = false;
        bool any_data = false;
        bool any_base = false;
        for (auto& m : members) {
            if (m.is_base_class) {
                if (any_field) {
                    out += pretty ? "," : ", ";
                }
                out += pretty ? pad : "";
                out += "<" + m.get_type().name() + "> = " +
                       any(detail::component(v, m.get_type(), m.byte_offset));
                any_field = true;
                any_base = true;
                continue;
            }
            if (m.name.empty() && m.bit_size) {
                continue;  // unnamed bitfield padding (`int : 3;`) is not shown
            }
            if (pretty && any_base && !any_data) {
                out += ", " + pad + "members of " + s.tag_name() + ":";
                any_field = false;
            }
            any_data = true;
            if (any_field) {
                out += pretty ? "," : ", ";
            }
            out += pretty ? pad : "";
            any_field = true;
            if (m.is_static) {
                out += "static " + m.name + " = ";
                std::string full = s.tag_name() + "::" + m.name;
                std::optional<value> sv;
                try {
                    sv = ctx_.lookup_variable(full);
                } catch (const ompdbg::error&) {
                }
                out += sv ? any(*sv) : "<optimized out>";
                continue;
            }
            if (!m.name.empty()) {
                out += m.name + " = ";
            }
            value mv = detail::member_value(v, m);
            if (m.bit_size && mv.bytes.empty() && mv.address) {
                fetch(mv, ctx_);
            }
            out += any(mv);
        }
        if (!any_data) {
            if (any_field) {
                out += ", ";
            }
            return out + "<No data fields>}";
        }
        if (pretty) {
            out += "\n" + std::string(2 * static_cast<std::size_t>(depth_ - 1), ' ');
        }
        return out + "}";
    }

    std::string array(const value& v, const type& s) {
        nested guard(depth_);
        auto elem = s.target().value_or(type());
        auto counts = s.array_counts();
        std::uint64_t n = counts.empty() ? 0 : counts.front();
        std::uint64_t esz = elem.size();
        bool natural = opts_.letter == format_letter::natural || opts_.letter == format_letter::string;
        auto wide = wide_prefix(elem);
        if (natural && (elem.is_char() || wide) && esz > 0 && esz <= 4) {
            std::vector<std::uint32_t> chars(n);
            for (std::uint64_t i = 0; i < n && (i + 1) * esz <= v.bytes.size(); ++i) {
                std::uint32_t c = 0;
                std::memcpy(&c, v.bytes.data() + i * esz, esz);
                chars[i] = c;
            }
            // gdb does not print the last NUL of a char array (c_printstr).
            if (!chars.empty() && chars.back() == 0) {
                chars.pop_back();
            }
            return print_string(chars, opts_.max_string, opts_.repeat_threshold, false, wide.value_or(""));
        }
        if (n == 0 && v.address) {
            return hex(*v.address);  // flexible array member: gdb shows where it starts
        }
        if (n == 0 || esz == 0) {
            return "{}";
        }
        std::string out = "{";
        std::size_t things = 0;
        std::uint64_t i = 0;
        for (; i < n && things < opts_.max_elements; ++i) {
            if (i != 0) {
                out += ", ";
            }
            std::uint64_t reps = 1;
            auto same = [&](std::uint64_t a, std::uint64_t b) {
                return std::memcmp(v.bytes.data() + a * esz, v.bytes.data() + b * esz, esz) == 0;
            };
            while (i + reps < n && same(i, i + reps)) {
                ++reps;
            }
            out += any(detail::component(v, elem, i * esz));
            if (reps > opts_.repeat_threshold) {
                out += " <repeats " + std::to_string(reps) + " times>";
                i += reps - 1;
                things += opts_.repeat_threshold;
            } else {
                ++things;
            }
        }
        if (i < n) {
            out += "...";
        }
        return out + "}";
    }

    // The string behind a char pointer, read in chunks up to `set print elements`
    // (gdb's val_print_string).
    std::string pointed_string(std::uint64_t addr) {
        std::vector<std::uint32_t> chars;
        std::size_t limit = opts_.max_string;
        bool found_nul = false;
        std::string err;
        while (chars.size() < limit && !found_nul && err.empty()) {
            std::byte b[1];
            try {
                ctx_.read_memory(addr + chars.size(), b);
            } catch (const ompdbg::error& e) {
                err = e.what();
                break;
            }
            auto c = static_cast<unsigned char>(b[0]);
            if (c == 0) {
                found_nul = true;
            } else {
                chars.push_back(c);
            }
        }
        bool force = false;
        if (!found_nul && err.empty()) {
            std::byte b[1];
            try {
                ctx_.read_memory(addr + chars.size(), b);
                force = b[0] != std::byte{0};
            } catch (const ompdbg::error&) {
                force = true;
            }
        }
        if (!err.empty()) {
            if (chars.empty()) {
                return "<error: " + err + ">";
            }
            return print_string(chars, limit, opts_.repeat_threshold, false) + "<error: " + err + ">";
        }
        return print_string(chars, limit, opts_.repeat_threshold, force);
    }

    std::string pointer(const value& v, const type& s) {
        std::uint64_t addr = raw_bits(v);
        auto target = s.target().value_or(type());
        auto tk = target.strip_cv_typedef().kind();
        if (tk == type_kind::function) {
            return code_address(addr);
        }
        std::string out = hex(addr);
        if (addr != 0) {
            std::string sym = ctx_.symbolize(addr);
            if (!sym.empty()) {
                out += " " + sym;
            }
        }
        if (target.is_char() && addr != 0) {
            out += " " + pointed_string(addr);
        }
        return out;
    }

    // __int128 and unsigned __int128: all 128 bits, as gdb prints them.
    static bool is_wide_integer(const value& v, const type& s) {
        auto e = s.encoding();
        return s.size() == 16 && v.bytes.size() >= 16 && s.kind() != type_kind::pointer &&
               (e == base_encoding::signed_int || e == base_encoding::unsigned_int);
    }

    static unsigned __int128 bits128(const value& v) {
        unsigned __int128 b = 0;
        std::memcpy(&b, v.bytes.data(), 16);
        return b;
    }

    static std::string digits128(unsigned __int128 x, unsigned base) {
        if (x == 0) {
            return "0";
        }
        std::string out;
        for (; x != 0; x /= base) {
            out.insert(out.begin(), "0123456789abcdef"[static_cast<unsigned>(x % base)]);
        }
        return out;
    }

    static std::string decimal128(const value& v, bool is_signed) {
        unsigned __int128 b = bits128(v);
        if (is_signed && (b >> 127) != 0) {
            return "-" + digits128(~b + 1, 10);
        }
        return digits128(b, 10);
    }

    // The format letters that show bits, on all 128 of them; nullopt for the others.
    std::optional<std::string> formatted128(const value& v) {
        unsigned __int128 b = bits128(v);
        switch (opts_.letter) {
            case format_letter::hex: return "0x" + digits128(b, 16);
            case format_letter::zero_hex: {
                std::string d = digits128(b, 16);
                return "0x" + std::string(32 - d.size(), '0') + d;
            }
            case format_letter::octal: return b == 0 ? "0" : "0" + digits128(b, 8);
            case format_letter::binary: return digits128(b, 2);
            case format_letter::decimal: return decimal128(v, true);
            case format_letter::unsigned_: return decimal128(v, false);
            default: return std::nullopt;
        }
    }

    // print_scalar_formatted: the value's bits reinterpreted per format letter.
    std::string formatted(const value& v, const type& s) {
        if (is_wide_integer(v, s)) {
            if (auto text = formatted128(v)) {
                return *text;
            }
        }
        unsigned size = static_cast<unsigned>(std::min<std::uint64_t>(s.size(), 8));
        if (size == 0) {
            size = 8;
        }
        std::uint64_t mask = size >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (size * 8)) - 1;
        std::uint64_t bits;
        bool is_float = detail::is_floating(s);
        if (is_float && (opts_.letter == format_letter::char_ || opts_.letter == format_letter::address)) {
            // gdb converts a floating value (not its bits) for /c and /a.
            bits = detail::float_to_bits(detail::to_float(v));
            is_float = false;
        } else if (is_float) {
            bits = 0;
            std::memcpy(&bits, v.bytes.data(), std::min<std::size_t>(size, v.bytes.size()));
        } else {
            bits = static_cast<std::uint64_t>(to_int(v)) & mask;
        }
        auto sign_extended = [&] {
            std::uint64_t b = bits;
            if (size < 8 && ((b >> (size * 8 - 1)) & 1)) {
                b |= ~mask;
            }
            return static_cast<std::int64_t>(b);
        };
        switch (opts_.letter) {
            case format_letter::hex:
                return hex(bits);
            case format_letter::zero_hex: {
                char buf[40];
                std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(size * 2),
                              static_cast<unsigned long long>(bits));
                return buf;
            }
            case format_letter::octal: {
                if (bits == 0) {
                    return "0";
                }
                char buf[40];
                std::snprintf(buf, sizeof buf, "0%llo", static_cast<unsigned long long>(bits));
                return buf;
            }
            case format_letter::binary: {
                if (bits == 0) {
                    return "0";
                }
                std::string out;
                for (int i = 63; i >= 0; --i) {
                    if (!out.empty() || ((bits >> i) & 1)) {
                        out += ((bits >> i) & 1) ? '1' : '0';
                    }
                }
                return out;
            }
            case format_letter::decimal:
                return std::to_string(sign_extended());
            case format_letter::unsigned_:
                return std::to_string(bits);
            case format_letter::char_: {
                auto c = static_cast<unsigned char>(bits & 0xff);
                long shown = detail::is_signed(s) || is_float ? static_cast<signed char>(c) : c;
                return std::to_string(shown) + " " + char_literal(c);
            }
            case format_letter::address:
                // An address is pointer-sized: signed values are sign-extended.
                return code_address(detail::is_signed(s) ? static_cast<std::uint64_t>(sign_extended()) : bits);
            case format_letter::float_: {
                if (is_float) {
                    return format_float(v);
                }
                if (size == 4 || size == 8) {
                    value f;
                    f.val_type = size == 4 ? *detail::builtin_type("float") : detail::double_type();
                    f.bytes.resize(size);
                    std::memcpy(f.bytes.data(), &bits, size);
                    return format_float(f);
                }
                return std::to_string(detail::is_signed(s) ? sign_extended()
                                                           : static_cast<std::int64_t>(bits));
            }
            default:
                return "";
        }
    }

    // gdb's i386_eflags flags type: the names of the set bits, "[ PF IF ]".
    static std::string eflags(std::uint64_t bits) {
        static const std::pair<int, const char*> names[] = {
            {0, "CF"}, {2, "PF"}, {4, "AF"}, {6, "ZF"}, {7, "SF"}, {8, "TF"}, {9, "IF"},
            {10, "DF"}, {11, "OF"}, {14, "NT"}, {16, "RF"}, {17, "VM"}, {18, "AC"},
            {19, "VIF"}, {20, "VIP"}, {21, "ID"}};
        std::string out = "[ ";
        for (auto& [bit, name] : names) {
            if ((bits >> bit) & 1) {
                out += std::string(name) + " ";
            }
        }
        return out + "]";
    }

    std::string scalar(const value& v, const type& s) {
        if (v.bytes.empty()) {
            return "<unavailable>";
        }
        if (opts_.letter != format_letter::natural && opts_.letter != format_letter::string) {
            return formatted(v, s);
        }
        if (s.is_synthetic() && s.kind() == type_kind::base && s.name() == "i386_eflags") {
            return eflags(raw_bits(v));
        }
        switch (s.kind()) {
            case type_kind::pointer:
                return pointer(v, s);
            case type_kind::enumeration:
                return format_enum(v);
            case type_kind::ptr_to_member:
                return hex(raw_bits(v));
            default:
                break;
        }
        if (auto wide = wide_prefix(s)) {
            auto c = static_cast<std::uint32_t>(raw_bits(v));
            return std::to_string(detail::is_signed(s) ? to_int(v) : static_cast<std::int64_t>(c)) + " " +
                   char_literal(c, *wide);
        }
        if (is_wide_integer(v, s)) {
            return decimal128(v, s.encoding() == base_encoding::signed_int);
        }
        switch (s.encoding()) {
            case base_encoding::floating:
                return format_float(v);
            case base_encoding::boolean: {
                auto b = raw_bits(v);
                return b == 0 ? "false" : b == 1 ? "true" : std::to_string(b);
            }
            case base_encoding::signed_int:
            case base_encoding::signed_char:
                if (s.is_char()) {
                    return std::to_string(to_int(v)) + " " +
                           char_literal(static_cast<unsigned char>(raw_bits(v)));
                }
                return std::to_string(to_int(v));
            case base_encoding::unsigned_int:
            case base_encoding::unsigned_char:
                if (s.is_char()) {
                    return std::to_string(raw_bits(v)) + " " +
                           char_literal(static_cast<unsigned char>(raw_bits(v)));
                }
                if (s.size() > 8 || v.bytes.size() > 8) {
                    // __int128: gdb prints these in hex when they do not fit.
                    return hex(raw_bits(v));
                }
                return std::to_string(raw_bits(v));
            default:
                return hex(raw_bits(v));
        }
    }

    eval_context& ctx_;
    format_options opts_;
    int depth_ = 0;   // nesting inside structs/arrays

    struct nested {
        explicit nested(int& d) : d_(d) { ++d_; }
        ~nested() { --d_; }
        int& d_;
    };
};

}  // namespace

std::string format_value(const value& v, eval_context& ctx, const format_options& opts) {
    printer p(ctx, opts);
    if (opts.top_level) {
        return p.top(v);
    }
    return p.any(v);
}

std::optional<format_letter> parse_format_letter(char c) {
    switch (c) {
        case 'x':
            return format_letter::hex;
        case 'z':
            return format_letter::zero_hex;
        case 'd':
            return format_letter::decimal;
        case 'u':
            return format_letter::unsigned_;
        case 'o':
            return format_letter::octal;
        case 't':
            return format_letter::binary;
        case 'c':
            return format_letter::char_;
        case 'a':
            return format_letter::address;
        case 'f':
            return format_letter::float_;
        case 's':
            return format_letter::string;
        default:
            return std::nullopt;
    }
}

}  // namespace ompdbg::dwarf
