// The lexer of the expression language: numbers with their C suffixes and gdb's literal
// types, character and string literals with their escapes, identifiers, $-names and
// punctuators.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

#include "internal/expr_lexer.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf::detail {
namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

class lexer {
public:
    explicit lexer(std::string_view in) : in_(in) {}

    std::vector<token> run() {
        std::vector<token> out;
        for (;;) {
            token t = next();
            out.push_back(t);
            if (t.k == token::kind::end) {
                return out;
            }
        }
    }

private:
    // One escape sequence after a backslash at in_[i]; advances i past it.
    unsigned char escape(std::size_t& i) {
        char c = in_[i++];
        switch (c) {
            case 'n':
                return '\n';
            case 't':
                return '\t';
            case 'r':
                return '\r';
            case 'a':
                return '\a';
            case 'b':
                return '\b';
            case 'f':
                return '\f';
            case 'v':
                return '\v';
            case 'e':
                return 033;
            case 'x': {
                unsigned v = 0;
                int n = 0;
                while (i < in_.size() && hex_digit(in_[i]) >= 0) {
                    v = v * 16 + static_cast<unsigned>(hex_digit(in_[i++]));
                    ++n;
                }
                if (n == 0) {
                    error::send("\\x escape without a following hex digit");
                }
                return static_cast<unsigned char>(v);
            }
            default:
                if (c >= '0' && c <= '7') {
                    unsigned v = static_cast<unsigned>(c - '0');
                    for (int n = 1; n < 3 && i < in_.size() && in_[i] >= '0' && in_[i] <= '7'; ++n) {
                        v = v * 8 + static_cast<unsigned>(in_[i++] - '0');
                    }
                    return static_cast<unsigned char>(v);
                }
                return static_cast<unsigned char>(c);
        }
    }

    token number(std::size_t start) {
        std::size_t i = start;
        bool is_float = false;
        int base = 10;
        if (in_[i] == '0' && i + 1 < in_.size() && (in_[i + 1] == 'x' || in_[i + 1] == 'X')) {
            base = 16;
            i += 2;
        } else if (in_[i] == '0' && i + 1 < in_.size() && (in_[i + 1] == 'b' || in_[i + 1] == 'B')) {
            base = 2;
            i += 2;
        }
        // Take the whole "pp-number" so that "08" or "1x" are reported as one bad number.
        while (i < in_.size()) {
            char c = in_[i];
            if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
                if (base == 10 && (c == 'e' || c == 'E') && i + 1 < in_.size() &&
                    (in_[i + 1] == '+' || in_[i + 1] == '-')) {
                    is_float = true;
                    i += 2;
                    continue;
                }
                ++i;
            } else if (c == '.' && base == 10 && !is_float) {
                is_float = true;
                ++i;
            } else {
                break;
            }
        }
        std::string text(in_.substr(start, i - start));
        token t;
        t.pos = start;
        t.text = text;
        pos_ = i;
        auto bad = [&]() -> token { error::send("Invalid number \"" + text + "\"."); };
        if (base == 10 && !is_float) {
            for (char c : text) {
                if (c == 'e' || c == 'E') {
                    is_float = true;
                }
            }
        }
        if (is_float) {
            std::string body = text;
            std::string suffix;
            while (!body.empty() && (body.back() == 'f' || body.back() == 'F' || body.back() == 'l' ||
                                     body.back() == 'L')) {
                suffix.insert(suffix.begin(), static_cast<char>(std::tolower(body.back())));
                body.pop_back();
            }
            if (suffix.size() > 1) {
                bad();
            }
            char* end = nullptr;
            long double v = std::strtold(body.c_str(), &end);
            if (body.empty() || end != body.c_str() + body.size()) {
                bad();
            }
            t.k = token::kind::floating;
            t.fval = v;
            t.int_type = suffix == "f" ? "float" : suffix == "l" ? "long double" : "double";
            return t;
        }
        std::string digits = text.substr(base == 10 ? 0 : 2);
        std::string suffix;
        while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' ||
                                   digits.back() == 'l' || digits.back() == 'L')) {
            suffix.insert(suffix.begin(), static_cast<char>(std::tolower(digits.back())));
            digits.pop_back();
        }
        if (base == 10 && digits.size() > 1 && digits[0] == '0') {
            base = 8;
        }
        if (digits.empty()) {
            bad();
        }
        unsigned __int128 v = 0;
        for (char c : digits) {
            int d = hex_digit(c);
            if (d < 0 || d >= base) {
                bad();
            }
            v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
            if (v > ~std::uint64_t{0}) {
                error::send("Numeric constant too large.");
            }
        }
        bool u = suffix.find('u') != std::string::npos;
        auto longs = std::count(suffix.begin(), suffix.end(), 'l');
        if (suffix.size() != static_cast<std::size_t>(longs) + (u ? 1 : 0) || longs > 2) {
            bad();
        }
        auto val = static_cast<std::uint64_t>(v);
        // C's rules for the type of an integer constant (decimal: int, long; others may
        // also become unsigned), as gdb's parse_number applies them.
        std::string type_name;
        if (longs == 0 && !u && val <= 0x7fffffffULL) {
            type_name = "int";
        } else if (longs == 0 && (u || base != 10) && val <= 0xffffffffULL) {
            type_name = "unsigned int";
        } else if (!u && val <= 0x7fffffffffffffffULL) {
            type_name = "long";
        } else {
            type_name = "unsigned long";
        }
        t.k = token::kind::number;
        t.ival = val;
        t.int_type = type_name;
        return t;
    }

    token next() {
        while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) {
            ++pos_;
        }
        token t;
        t.pos = pos_;
        if (pos_ >= in_.size()) {
            return t;
        }
        char c = in_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c)) ||
            (c == '.' && pos_ + 1 < in_.size() && std::isdigit(static_cast<unsigned char>(in_[pos_ + 1])))) {
            return number(pos_);
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t i = pos_;
            while (i < in_.size() && (std::isalnum(static_cast<unsigned char>(in_[i])) || in_[i] == '_')) {
                ++i;
            }
            t.k = token::kind::ident;
            t.text = std::string(in_.substr(pos_, i - pos_));
            pos_ = i;
            return t;
        }
        if (c == '$') {
            std::size_t i = pos_ + 1;
            while (i < in_.size() && (std::isalnum(static_cast<unsigned char>(in_[i])) || in_[i] == '_' ||
                                      in_[i] == '$')) {
                ++i;
            }
            t.k = token::kind::dollar;
            t.text = std::string(in_.substr(pos_ + 1, i - pos_ - 1));
            pos_ = i;
            return t;
        }
        if (c == '\'') {
            std::size_t i = pos_ + 1;
            if (i < in_.size() && in_[i] == '\'') {
                error::send("A character constant must contain at least one character.");
            }
            if (i >= in_.size()) {
                error::send("Unmatched single quote.");
            }
            unsigned char v;
            if (in_[i] == '\\') {
                ++i;
                if (i >= in_.size()) {
                    error::send("Unmatched single quote.");
                }
                v = escape(i);
            } else {
                v = static_cast<unsigned char>(in_[i++]);
            }
            if (i >= in_.size()) {
                error::send("Unmatched single quote.");
            }
            if (in_[i] != '\'') {
                // 'ab': gdb looks for the closing quote further on.
                if (in_.find('\'', i) != std::string_view::npos) {
                    error::send("Invalid character constant.");
                }
                error::send("Unmatched single quote.");
            }
            t.k = token::kind::character;
            t.ival = v;
            pos_ = i + 1;
            return t;
        }
        if (c == '"') {
            std::size_t i = pos_ + 1;
            std::string s;
            for (;;) {
                if (i >= in_.size()) {
                    error::send("Unterminated string in expression.");
                }
                if (in_[i] == '"') {
                    ++i;
                    break;
                }
                if (in_[i] == '\\') {
                    ++i;
                    if (i >= in_.size()) {
                        error::send("Unterminated string in expression.");
                    }
                    s += static_cast<char>(escape(i));
                } else {
                    s += in_[i++];
                }
            }
            t.k = token::kind::string;
            t.text = s;
            pos_ = i;
            return t;
        }
        static const char* puncts[] = {"<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
                                       "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                       "^=", "::", "+", "-", "*", "/", "%", "<", ">", "=", "!",
                                       "~", "&", "|", "^", "?", ":", ",", ".", "(", ")", "[", "]",
                                       "@", "{", "}"};
        for (const char* p : puncts) {
            std::size_t n = std::strlen(p);
            if (in_.substr(pos_, n) == p) {
                t.k = token::kind::punct;
                t.text = p;
                pos_ += n;
                return t;
            }
        }
        error::send("Invalid character '" + std::string(1, c) + "' in expression.");
    }

    std::string_view in_;
    std::size_t pos_ = 0;
};

}  // namespace

std::vector<token> tokenize(std::string_view in) { return lexer(in).run(); }

}  // namespace ompdbg::dwarf::detail
