// The parser of the expression language of print / set var / x / break ... if.
//
// Hand-written recursive descent with C's precedence levels (gdb's c-exp.y table, '@'
// between shifts and additive operators). No Debian package parses C expressions for a
// debugger (gdb's bison grammar is not a library, and libclang wants whole translation
// units and cannot consult the debuggee's symbols), so this small parser is ours.
// The tokens come from expr_lex.cpp.

#include <algorithm>
#include <string>
#include <string_view>

#include "internal/expr_ast.hpp"
#include "internal/expr_lexer.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf {
namespace {

using detail::token;

[[noreturn]] void syntax_error(std::string_view input, std::size_t pos) {
    error::send("A syntax error in expression, near `" +
                std::string(input.substr(std::min(pos, input.size()))) + "'.");
}

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
    parser(std::string_view in, eval_context* ctx) : in_(in), toks_(detail::tokenize(in)), ctx_(ctx) {}

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
