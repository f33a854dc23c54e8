// Lexer and parser of the expression language of print / set var / x / break ... if.
//
// Hand-written recursive descent with C's precedence levels (gdb's c-exp.y table, '@'
// between shifts and additive operators). No Debian package parses C expressions for a
// debugger (gdb's bison grammar is not a library, and libclang wants whole translation
// units and cannot consult the debuggee's symbols), so this small parser is ours.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

#include "internal/expr_ast.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf {
namespace {

struct token {
    enum class kind { end, number, floating, character, string, ident, dollar, punct } k = kind::end;
    std::string text;            ///< identifier / punctuator / number as written / $-name
    std::size_t pos = 0;         ///< offset in the input (for "near `...'")
    std::uint64_t ival = 0;
    long double fval = 0;
    std::string int_type;        ///< literal's type: "int", "long", "unsigned int", ...
};

[[noreturn]] void syntax_error(std::string_view input, std::size_t pos) {
    error::send("A syntax error in expression, near `" +
                std::string(input.substr(std::min(pos, input.size()))) + "'.");
}

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

bool is_type_keyword(const std::string& s) {
    static const char* kws[] = {"struct", "union", "enum", "class", "unsigned", "signed", "short",
                                "long", "int", "char", "float", "double", "void", "_Bool",
                                "bool", "const", "volatile", "__int128"};
    for (const char* k : kws) {
        if (s == k) {
            return true;
        }
    }
    return false;
}

class parser {
public:
    parser(std::string_view in, eval_context* ctx) : in_(in), toks_(lexer(in).run()), ctx_(ctx) {}

    expr_ptr parse_all() {
        if (peek().k == token::kind::end) {
            syntax_error(in_, 0);
        }
        auto e = comma();
        if (peek().k != token::kind::end) {
            syntax_error(in_, peek().pos);
        }
        return e;
    }

    std::shared_ptr<type_spec> parse_type_only() {
        if (!starts_type(0)) {
            return nullptr;
        }
        auto ts = type_name();
        if (peek().k != token::kind::end) {
            return nullptr;
        }
        return ts;
    }

private:
    const token& peek(std::size_t ahead = 0) const {
        return toks_[std::min(i_ + ahead, toks_.size() - 1)];
    }
    bool is(const char* p, std::size_t ahead = 0) const {
        auto& t = peek(ahead);
        return t.k == token::kind::punct && t.text == p;
    }
    bool is_ident(const char* p, std::size_t ahead = 0) const {
        auto& t = peek(ahead);
        return t.k == token::kind::ident && t.text == p;
    }
    void expect(const char* p) {
        if (!is(p)) {
            syntax_error(in_, peek().pos);
        }
        ++i_;
    }

    static expr_ptr node(expression::kind k, std::string op, std::vector<expr_ptr> kids) {
        auto e = std::make_shared<expression>();
        e->k = k;
        e->op = std::move(op);
        e->kids = std::move(kids);
        return e;
    }

    // Qualified identifier starting at `ahead`: returns its text and token count.
    std::pair<std::string, std::size_t> qualified(std::size_t ahead) const {
        std::string name;
        std::size_t n = 0;
        if (is("::", ahead)) {
            name = "::";
            ++n;
        }
        if (peek(ahead + n).k != token::kind::ident) {
            return {"", 0};
        }
        name += peek(ahead + n).text;
        ++n;
        while (is("::", ahead + n) && peek(ahead + n + 1).k == token::kind::ident) {
            name += "::" + peek(ahead + n + 1).text;
            n += 2;
        }
        return {name, n};
    }

    bool names_type(const std::string& name) const {
        if (!ctx_) {
            return false;
        }
        try {
            std::string plain = name.rfind("::", 0) == 0 ? name.substr(2) : name;
            if (!ctx_->lookup_type(plain)) {
                return false;
            }
            return !ctx_->lookup_variable(plain);
        } catch (const ompdbg::error&) {
            return false;
        }
    }

    // Does a type name start at `ahead`? Keywords always; an identifier when the context
    // knows it as a type (not shadowed by a variable), or — without a context — when a
    // '*' / '&' sequence and ')' follow it, which no expression can.
    bool starts_type(std::size_t ahead) const {
        auto& t = peek(ahead);
        if (t.k == token::kind::ident && is_type_keyword(t.text)) {
            return true;
        }
        auto [name, n] = qualified(ahead);
        if (n == 0) {
            return false;
        }
        if (names_type(name)) {
            return true;
        }
        std::size_t k = ahead + n;
        if (!is("*", k) && !is("&", k)) {
            return false;
        }
        while (is("*", k) || is("&", k) || is("&&", k) || is_ident("const", k)) {
            ++k;
        }
        return is(")", k);
    }

    std::shared_ptr<type_spec> type_name() {
        auto ts = std::make_shared<type_spec>();
        std::string base;
        auto add = [&](const std::string& w) {
            if (!base.empty()) {
                base += ' ';
            }
            base += w;
        };
        for (;;) {
            auto& t = peek();
            if (t.k != token::kind::ident) {
                break;
            }
            if (t.text == "const" || t.text == "volatile") {
                (t.text == "const" ? ts->is_const : ts->is_volatile) = true;
                ++i_;
                continue;
            }
            if (t.text == "struct" || t.text == "union" || t.text == "enum" || t.text == "class") {
                ++i_;
                auto [name, n] = qualified(0);
                if (n == 0) {
                    syntax_error(in_, peek().pos);
                }
                i_ += n;
                add(t.text == "class" ? "struct" : std::string(toks_[i_ - n - 1].text));
                add(name);
                break;
            }
            if (is_type_keyword(t.text)) {
                add(t.text);
                ++i_;
                continue;
            }
            if (!base.empty()) {
                break;
            }
            auto [name, n] = qualified(0);
            i_ += n;
            add(name);
            break;
        }
        while (is_ident("const") || is_ident("volatile")) {
            (peek().text == "const" ? ts->is_const : ts->is_volatile) = true;
            ++i_;
        }
        if (base.empty()) {
            syntax_error(in_, peek().pos);
        }
        ts->base = base;
        ts->decl = abstract_declarator();
        return ts;
    }

    declarator_spec abstract_declarator() {
        depth_guard guard(depth_);
        declarator_spec d;
        for (;;) {
            if (is("*")) {
                d.ptrs.push_back({declarator_spec::ptr_op::kind::pointer});
            } else if (is("&")) {
                d.ptrs.push_back({declarator_spec::ptr_op::kind::reference});
            } else if (is("&&")) {
                d.ptrs.push_back({declarator_spec::ptr_op::kind::rvalue_reference});
            } else if ((is_ident("const") || is_ident("volatile")) && !d.ptrs.empty()) {
                (peek().text == "const" ? d.ptrs.back().is_const : d.ptrs.back().is_volatile) = true;
            } else {
                break;
            }
            ++i_;
        }
        if (is("(") && (is("*", 1) || is("&", 1) || is("(", 1))) {
            ++i_;
            d.inner = std::make_shared<declarator_spec>(abstract_declarator());
            expect(")");
        }
        for (;;) {
            if (is("[")) {
                ++i_;
                declarator_spec::suffix s;
                if (peek().k == token::kind::number) {
                    s.count = peek().ival;
                    ++i_;
                }
                expect("]");
                d.suffixes.push_back(std::move(s));
            } else if (is("(")) {
                ++i_;
                declarator_spec::suffix s;
                s.is_function = true;
                if (is(")")) {
                    s.prototyped = false;
                } else if (is_ident("void") && is(")", 1)) {
                    ++i_;
                } else {
                    for (;;) {
                        if (is(".") && is(".", 1) && is(".", 2)) {
                            i_ += 3;
                            s.varargs = true;
                            break;
                        }
                        s.params.push_back(*type_name());
                        if (!is(",")) {
                            break;
                        }
                        ++i_;
                    }
                }
                expect(")");
                d.suffixes.push_back(std::move(s));
            } else {
                break;
            }
        }
        return d;
    }

    expr_ptr comma() {
        auto e = assignment();
        while (is(",")) {
            ++i_;
            e = node(expression::kind::comma, ",", {e, assignment()});
        }
        return e;
    }

    expr_ptr assignment() {
        auto lhs = ternary();
        static const char* ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="};
        for (const char* op : ops) {
            if (is(op)) {
                ++i_;
                auto rhs = assignment();
                return node(expression::kind::assign, op, {lhs, rhs});
            }
        }
        return lhs;
    }

    expr_ptr ternary() {
        auto c = binary(0);
        if (is("?")) {
            ++i_;
            auto a = comma();
            expect(":");
            auto b = ternary();
            return node(expression::kind::ternary, "?", {c, a, b});
        }
        return c;
    }

    // Binary operators by precedence climbing, levels from loosest to tightest (gdb's
    // c-exp.y); one stack frame per operator instead of one per level keeps deep nesting
    // cheap.
    static int binary_level(const token& t) {
        static const std::vector<std::vector<const char*>> levels = {
            {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="},
            {"<<", ">>"}, {"@"}, {"+", "-"}, {"*", "/", "%"}};
        if (t.k != token::kind::punct) {
            return -1;
        }
        for (std::size_t l = 0; l < levels.size(); ++l) {
            for (const char* op : levels[l]) {
                if (t.text == op) {
                    return static_cast<int>(l);
                }
            }
        }
        return -1;
    }

    expr_ptr binary(int min_level) {
        auto lhs = unary();
        for (;;) {
            int level = binary_level(peek());
            if (level < 0 || level < min_level) {
                return lhs;
            }
            std::string op = peek().text;
            ++i_;
            auto rhs = binary(level + 1);
            lhs = node(expression::kind::binary, op, {lhs, rhs});
        }
    }

    // Nesting guard: a pathological input ("((((...") must fail cleanly, not overflow the stack.
    struct depth_guard {
        explicit depth_guard(int& d) : d_(d) {
            if (++d_ > 256) {
                --d_;
                error::send("Expression too complex (nested more than 256 levels).");
            }
        }
        ~depth_guard() { --d_; }
        int& d_;
    };

    expr_ptr unary() {
        depth_guard guard(depth_);
        static const char* ops[] = {"-", "+", "!", "~", "*", "&", "++", "--"};
        for (const char* op : ops) {
            if (is(op)) {
                ++i_;
                return node(expression::kind::unary, op, {unary()});
            }
        }
        if (is_ident("sizeof")) {
            ++i_;
            if (is("(") && starts_type(1)) {
                ++i_;
                auto e = node(expression::kind::sizeof_type, "sizeof", {});
                std::const_pointer_cast<expression>(e)->ts = type_name();
                expect(")");
                return e;
            }
            return node(expression::kind::sizeof_expr, "sizeof", {unary()});
        }
        if (is("(") && starts_type(1)) {
            std::size_t save = i_;
            ++i_;
            auto ts = type_name();
            if (is(")")) {
                ++i_;
                auto e = node(expression::kind::cast, "cast", {unary()});
                std::const_pointer_cast<expression>(e)->ts = ts;
                return e;
            }
            i_ = save;
        }
        return postfix();
    }

    expr_ptr postfix() {
        auto e = primary();
        for (;;) {
            if (is(".") || is("->")) {
                bool arrow = is("->");
                ++i_;
                if (peek().k != token::kind::ident) {
                    syntax_error(in_, peek().pos);
                }
                auto n = node(arrow ? expression::kind::arrow : expression::kind::member, "", {e});
                std::const_pointer_cast<expression>(n)->text = peek().text;
                ++i_;
                e = n;
            } else if (is("[")) {
                ++i_;
                auto idx = comma();
                expect("]");
                e = node(expression::kind::index, "[]", {e, idx});
            } else if (is("(")) {
                ++i_;
                std::vector<expr_ptr> kids{e};
                if (!is(")")) {
                    kids.push_back(assignment());
                    while (is(",")) {
                        ++i_;
                        kids.push_back(assignment());
                    }
                }
                expect(")");
                e = node(expression::kind::call, "()", std::move(kids));
            } else if (is("++") || is("--")) {
                e = node(expression::kind::postfix, peek().text, {e});
                ++i_;
            } else {
                return e;
            }
        }
    }

    expr_ptr primary() {
        auto& t = peek();
        auto e = std::make_shared<expression>();
        switch (t.k) {
            case token::kind::number:
                e->k = expression::kind::integer;
                e->ival = t.ival;
                e->text = t.int_type;
                ++i_;
                return e;
            case token::kind::floating:
                e->k = expression::kind::floating;
                e->fval = t.fval;
                e->text = t.int_type;
                ++i_;
                return e;
            case token::kind::character:
                e->k = expression::kind::character;
                e->ival = t.ival;
                ++i_;
                return e;
            case token::kind::string:
                e->k = expression::kind::string;
                e->text = t.text;
                ++i_;
                // Adjacent literals concatenate.
                while (peek().k == token::kind::string) {
                    e->text += peek().text;
                    ++i_;
                }
                return e;
            case token::kind::dollar:
                e->k = expression::kind::dollar;
                e->text = t.text;
                ++i_;
                return e;
            case token::kind::ident: {
                if (is_type_keyword(t.text) || t.text == "sizeof") {
                    syntax_error(in_, t.pos);
                }
                auto [name, n] = qualified(0);
                e->k = expression::kind::identifier;
                e->text = name;
                i_ += n;
                return e;
            }
            case token::kind::punct:
                if (t.text == "::") {
                    auto [name, n] = qualified(0);
                    if (n == 0) {
                        syntax_error(in_, peek(1).pos);
                    }
                    e->k = expression::kind::identifier;
                    e->text = name;
                    i_ += n;
                    return e;
                }
                if (t.text == "(") {
                    ++i_;
                    auto inner = comma();
                    expect(")");
                    return inner;
                }
                if (t.text == "{") {
                    // gdb's {type} addr: an lvalue of `type` at `addr`.
                    ++i_;
                    auto ts = type_name();
                    expect("}");
                    auto c = node(expression::kind::unary, "{}", {unary()});
                    std::const_pointer_cast<expression>(c)->ts = ts;
                    return c;
                }
                syntax_error(in_, t.pos);
            case token::kind::end:
            default:
                syntax_error(in_, t.pos);
        }
    }

    std::string_view in_;
    std::vector<token> toks_;
    eval_context* ctx_;
    std::size_t i_ = 0;
    int depth_ = 0;
};

}  // namespace

std::shared_ptr<const expression> parse_expression(std::string_view text, eval_context* ctx) {
    parser p(text, ctx);
    return p.parse_all();
}

std::shared_ptr<type_spec> parse_type_spec(std::string_view text, eval_context* ctx) {
    try {
        parser p(text, ctx);
        return p.parse_type_only();
    } catch (const ompdbg::error&) {
        return nullptr;
    }
}

}  // namespace ompdbg::dwarf
