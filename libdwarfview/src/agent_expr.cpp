// Conditions compiled into agent bytecode (agent_expr.hpp). The AST of the expression
// parser is walked once: lvalues leave their address on the agent's stack, rvalues their
// value extended to 64 bits with the static type kept here (internal/agent_emitter.hpp).
// Arithmetic follows C's integer promotions and usual arithmetic conversions, as the
// debugger's own evaluator (expr_operators.cpp) does, so both always agree on the answer.

#include "ompdbg/dwarf/agent_expr.hpp"

#include "internal/agent_emitter.hpp"
#include "internal/agent_location.hpp"
#include "internal/expr_ast.hpp"

#include "ompdbg/dwarf/debug_info.hpp"

#include <map>
#include <string>

namespace ompdbg::dwarf {

namespace {

using agent::emitter;
using agent::refused;
using agent::scalar;

/// The integer types a literal or a cast may name, as gdb's builtin C types.
std::optional<scalar> builtin_scalar(const std::string& name) {
    static const std::map<std::string, scalar> table{
        {"char", {1, true, {}}},           {"signed char", {1, true, {}}},
        {"unsigned char", {1, false, {}}}, {"short", {2, true, {}}},
        {"unsigned short", {2, false, {}}}, {"int", {4, true, {}}},
        {"unsigned int", {4, false, {}}},  {"unsigned", {4, false, {}}},
        {"long", {8, true, {}}},           {"unsigned long", {8, false, {}}},
        {"long long", {8, true, {}}},      {"unsigned long long", {8, false, {}}},
        {"bool", {1, false, {}}},          {"_Bool", {1, false, {}}},
    };
    auto it = table.find(name);
    if (it == table.end()) {
        return std::nullopt;
    }
    return it->second;
}

/// The scalar view of a DWARF type; refuses floating point, aggregates and the like.
scalar scalar_of(const type& t0) {
    type t = t0.strip_cv_typedef();
    switch (t.kind()) {
    case type_kind::pointer: {
        auto target = t.target();
        return scalar{8, false, target ? *target : type::void_type()};
    }
    case type_kind::base:
    case type_kind::enumeration: {
        auto enc = t.encoding();
        auto size = t.size();
        if (enc == base_encoding::floating || enc == base_encoding::other || (size != 1 && size != 2 && size != 4 && size != 8)) {
            throw refused{"a value that is not an integer or a pointer"};
        }
        bool is_signed = enc == base_encoding::signed_int || enc == base_encoding::signed_char;
        return scalar{static_cast<unsigned>(size), is_signed, {}};
    }
    default:
        throw refused{"a value that is not an integer or a pointer"};
    }
}

/// Integer promotion: what is narrower than int becomes int.
scalar promote(scalar s) {
    if (!s.is_pointer() && s.size < 4) {
        return scalar{4, true, {}};
    }
    return s;
}

/// Usual arithmetic conversions of two promoted integers.
scalar common_type(scalar a, scalar b) {
    if (a.size != b.size) {
        scalar wide = a.size > b.size ? a : b;
        const scalar& narrow = a.size > b.size ? b : a;
        // A wider signed type holds every value of a narrower unsigned one.
        (void)narrow;
        return wide;
    }
    return scalar{a.size, a.is_signed && b.is_signed, {}};
}

class compiler {
public:
    compiler(const debug_info& info, std::uint64_t file_pc, std::uint64_t bias, const agent_compile_options& options)
        : info_(info), locator_(info, file_pc, bias, false, options.tls_block), file_pc_(file_pc), out_(own_),
          fields_(options.fields) {}

    std::vector<std::uint8_t> run(const expression& e, bool& pointer) {
        scalar s = rvalue(e);
        pointer = s.is_pointer();
        out_.op(OMPDBG_OP_END);
        if (out_.code().size() > OMPDBG_AGENT_CODE_BYTES) {
            throw refused{"a condition too long for the agent"};
        }
        return std::move(out_.code());
    }

private:
    /// Compiles into `out` in the frame of the site function's caller (caller_field).
    compiler(const debug_info& info, std::uint64_t file_pc, std::uint64_t bias, emitter& out)
        : info_(info), locator_(info, file_pc, bias, true), file_pc_(file_pc), out_(out), fields_(no_fields()) {}

    static const std::vector<agent_caller_field>& no_fields() {
        static const std::vector<agent_caller_field> none;
        return none;
    }

    /// A caller field's value (agent_caller_field): the return address on the stack picks
    /// the call site whose compiled expression gives it; another one, undecided.
    scalar caller_field(const agent_caller_field& f) {
        if (f.return_addresses.empty() || f.info == nullptr) {
            throw refused{"an OpenMP event field the agent does not read"};
        }
        auto e = parse_expression(f.expression, nullptr);
        std::vector<std::size_t> to_end;
        for (std::uint64_t ra : f.return_addresses) {
            out_.op8(OMPDBG_OP_REG, 7);
            out_.op8(OMPDBG_OP_LOAD_FRAME, 8);
            out_.constant(ra);
            out_.op(OMPDBG_OP_EQ);
            auto next = out_.jump(OMPDBG_OP_JZ);
            // The caller's scope and CFI at its call instruction, as a debugger unwinds.
            compiler at_call(*f.info, ra - f.load_bias - 1, f.load_bias, out_);
            if (at_call.rvalue(*e).is_pointer()) {
                throw refused{"an OpenMP event field the agent does not read"};
            }
            to_end.push_back(out_.jump(OMPDBG_OP_JMP));
            out_.land(next);
        }
        // 0 / 0: the agent cannot decide, the thread stops and the debugger evaluates.
        out_.constant(0);
        out_.constant(0);
        out_.op(OMPDBG_OP_DIV_S);
        for (auto at : to_end) {
            out_.land(at);
        }
        return scalar{8, true, {}};   // the event's fields are longs
    }

    /// The variable a name means at the site: a local or parameter, else a global.
    variable find_variable(const std::string& name) {
        for (auto& v : info_.variables_at(file_pc_)) {
            if (v.name == name) {
                return v;
            }
        }
        if (auto g = info_.find_global(name, file_pc_)) {
            return *g;
        }
        throw refused{"a name that is not a variable at the site"};
    }

    /// Leaves the address of `e` on the stack; its type in `t`.
    void lvalue(const expression& e, type& t) {
        using k = expression::kind;
        switch (e.k) {
        case k::identifier: {
            variable v = find_variable(e.text);
            if (!locator_.push_address(v, out_)) {
                throw refused{"a variable not in memory"};
            }
            // The site's frame (CFA, frame base, a register of the site) or a global: mapped
            // for sure, so read without the system call a pointer needs.
            mapped_ = true;
            t = v.var_type;
            return;
        }
        case k::unary:
            if (e.op == "*") {
                scalar p = rvalue(*e.kids[0]);
                mapped_ = false;
                if (!p.is_pointer() || p.pointee->is_void()) {
                    throw refused{"a dereference of something else than a typed pointer"};
                }
                t = *p.pointee;
                return;
            }
            break;
        case k::member:
        case k::arrow: {
            type agg;
            if (e.k == k::member) {
                lvalue(*e.kids[0], agg);   // a member of a mapped object is mapped
            } else {
                scalar p = rvalue(*e.kids[0]);
                mapped_ = false;
                if (!p.is_pointer()) {
                    throw refused{"-> on something else than a pointer"};
                }
                agg = *p.pointee;
            }
            for (const auto& m : agg.strip_cv_typedef().members()) {
                if (m.name == e.text && !m.is_static && !m.bit_size) {
                    out_.constant(m.byte_offset);
                    out_.op(OMPDBG_OP_ADD);
                    t = m.get_type();
                    return;
                }
            }
            throw refused{"a member the agent cannot find (bit-field, inherited, static)"};
        }
        case k::index: {
            type base_t;
            scalar base;
            const expression& b = *e.kids[0];
            type probe;
            if (try_array_lvalue(b, probe)) {
                auto elem = probe.strip_cv_typedef().target();
                if (!elem) {
                    throw refused{"an array without an element type"};
                }
                base = scalar{8, false, *elem};
            } else {
                base = rvalue(b);
            }
            if (!base.is_pointer() || base.pointee->size() == 0) {
                throw refused{"an index into something else than an array or a pointer"};
            }
            scalar i = promote(rvalue(*e.kids[1]));
            if (i.is_pointer()) {
                throw refused{"a pointer used as an index"};
            }
            out_.constant(base.pointee->size());
            out_.op(OMPDBG_OP_MUL);
            out_.op(OMPDBG_OP_ADD);
            mapped_ = false;   // any index, any address
            t = *base.pointee;
            return;
        }
        default:
            break;
        }
        throw refused{"an expression that has no address the agent can compute"};
    }

    /// An array-typed lvalue (its address is the first element's): true when `e` is one.
    bool try_array_lvalue(const expression& e, type& t) {
        if (e.k != expression::kind::identifier && e.k != expression::kind::member && e.k != expression::kind::arrow) {
            return false;
        }
        if (e.k == expression::kind::identifier) {
            variable v = find_variable(e.text);
            if (v.var_type.strip_cv_typedef().kind() != type_kind::array) {
                return false;
            }
        }
        std::size_t mark = out_.code().size();
        lvalue(e, t);
        if (t.strip_cv_typedef().kind() != type_kind::array) {
            out_.code().resize(mark);   // not an array after all: compiled again as a value
            return false;
        }
        return true;
    }

    /// An array used as a value is a pointer to its first element (C's decay; gdb's
    /// printf %s of a char array reads the string there): its address is on the stack.
    scalar decay(const type& array) {
        auto elem = array.strip_cv_typedef().target();
        if (!elem) {
            throw refused{"an array without an element type"};
        }
        return scalar{8, false, *elem};
    }

    /// Loads the scalar of type `t` whose address is on the stack.
    scalar load(const type& t) {
        scalar s = scalar_of(t);
        out_.op8(mapped_ ? OMPDBG_OP_LOAD_FRAME : OMPDBG_OP_LOAD, static_cast<std::uint8_t>(s.size));
        out_.normalise(s.size, s.is_signed);
        return s;
    }

    scalar rvalue(const expression& e) {
        using k = expression::kind;
        switch (e.k) {
        case k::integer: {
            auto s = builtin_scalar(e.text);
            if (!s) {
                throw refused{"a literal of an unusual type"};
            }
            out_.constant(e.ival);
            out_.normalise(s->size, s->is_signed);
            return *s;
        }
        case k::character:
            out_.constant(e.ival);
            out_.normalise(1, true);
            return scalar{1, true, {}};
        case k::boolean:
            out_.constant(e.ival != 0);
            return scalar{1, false, {}};
        case k::dollar:
            return dollar(e.text);
        case k::identifier: {
            for (const auto& f : fields_) {
                if (f.name == e.text) {
                    return caller_field(f);
                }
            }
            variable v = find_variable(e.text);
            if (v.var_type.strip_cv_typedef().kind() == type_kind::array) {
                type t;
                lvalue(e, t);
                return decay(t);
            }
            scalar s = scalar_of(v.var_type);
            if (locator_.push_value(v, s.size, out_)) {
                out_.normalise(s.size, s.is_signed);
                return s;
            }
            type t;
            lvalue(e, t);
            return load(t);
        }
        case k::unary:
            return unary(e);
        case k::binary:
            return binary(e);
        case k::member:
        case k::arrow:
        case k::index: {
            type t;
            lvalue(e, t);
            if (t.strip_cv_typedef().kind() == type_kind::array) {
                return decay(t);
            }
            return load(t);
        }
        case k::cast:
            return cast(e);
        case k::ternary: {
            rvalue(*e.kids[0]);
            auto to_else = out_.jump(OMPDBG_OP_JZ);
            scalar a = promote(rvalue(*e.kids[1]));
            auto to_end = out_.jump(OMPDBG_OP_JMP);
            out_.land(to_else);
            scalar b = promote(rvalue(*e.kids[2]));
            out_.land(to_end);
            if (a.is_pointer() || b.is_pointer() || a.size != b.size || a.is_signed != b.is_signed) {
                throw refused{"a conditional expression whose branches differ in type"};
            }
            return a;
        }
        default:
            throw refused{"an operation the agent does not evaluate (call, assignment, floating point, string)"};
        }
    }

    scalar dollar(const std::string& name) {
        static const std::map<std::string, int> regs{
            {"rax", 0}, {"rdx", 1}, {"rcx", 2}, {"rbx", 3}, {"rsi", 4}, {"rdi", 5}, {"rbp", 6}, {"rsp", 7},
            {"r8", 8},  {"r9", 9},  {"r10", 10}, {"r11", 11}, {"r12", 12}, {"r13", 13}, {"r14", 14}, {"r15", 15},
            {"rip", 16}, {"pc", 16}, {"sp", 7},  {"fp", 6},
        };
        auto it = regs.find(name);
        if (it == regs.end()) {
            throw refused{"a convenience variable or a register the agent does not save"};
        }
        out_.op8(OMPDBG_OP_REG, static_cast<std::uint8_t>(it->second));
        return scalar{8, true, {}};   // gdb's int64_t for the general registers
    }

    scalar cast(const expression& e) {
        if (!e.ts || !e.ts->decl.suffixes.empty() || e.ts->decl.inner) {
            throw refused{"a cast to a type the agent does not know"};
        }
        scalar from = rvalue(*e.kids[0]);
        if (!e.ts->decl.ptrs.empty()) {
            if (e.ts->decl.ptrs.size() != 1 || e.ts->decl.ptrs[0].k != declarator_spec::ptr_op::kind::pointer) {
                throw refused{"a cast to a type the agent does not know"};
            }
            auto base = builtin_scalar(e.ts->base);
            std::optional<type> pointee;
            if (e.ts->base == "void") {
                pointee = type::void_type();
            } else if (base) {
                pointee = info_.find_type(e.ts->base);
            } else {
                pointee = info_.find_type(e.ts->base);
            }
            if (!pointee) {
                throw refused{"a cast to a type the agent does not know"};
            }
            return scalar{8, false, *pointee};
        }
        auto to = builtin_scalar(e.ts->base);
        if (!to) {
            throw refused{"a cast to a type the agent does not know"};
        }
        (void)from;
        if (e.ts->base == "bool" || e.ts->base == "_Bool") {
            out_.op(OMPDBG_OP_LNOT);
            out_.op(OMPDBG_OP_LNOT);
        } else {
            out_.normalise(to->size, to->is_signed);
        }
        return *to;
    }

    scalar unary(const expression& e) {
        if (e.op == "*") {
            type t;
            lvalue(e, t);
            return load(t);
        }
        if (e.op == "!") {
            rvalue(*e.kids[0]);
            out_.op(OMPDBG_OP_LNOT);
            return scalar{4, true, {}};
        }
        if (e.op == "-" || e.op == "~" || e.op == "+") {
            scalar s = promote(rvalue(*e.kids[0]));
            if (s.is_pointer()) {
                throw refused{"arithmetic on a pointer the agent does not do"};
            }
            if (e.op != "+") {
                out_.op(e.op == "-" ? OMPDBG_OP_NEG : OMPDBG_OP_NOT);
                out_.normalise(s.size, s.is_signed);
            }
            return s;
        }
        throw refused{"an operator the agent does not evaluate (&, ++, --)"};
    }

    scalar logical(const expression& e) {
        bool is_and = e.op == "&&";
        rvalue(*e.kids[0]);
        auto to_short = out_.jump(OMPDBG_OP_JZ);
        if (is_and) {
            rvalue(*e.kids[1]);
            out_.op(OMPDBG_OP_LNOT);
            out_.op(OMPDBG_OP_LNOT);
            auto to_end = out_.jump(OMPDBG_OP_JMP);
            out_.land(to_short);
            out_.constant(0);
            out_.land(to_end);
        } else {
            out_.constant(1);
            auto to_end = out_.jump(OMPDBG_OP_JMP);
            out_.land(to_short);
            rvalue(*e.kids[1]);
            out_.op(OMPDBG_OP_LNOT);
            out_.op(OMPDBG_OP_LNOT);
            out_.land(to_end);
        }
        return scalar{4, true, {}};
    }

    scalar binary(const expression& e) {
        const std::string& op = e.op;
        if (op == "&&" || op == "||") {
            return logical(e);
        }
        scalar a = promote(rvalue(*e.kids[0]));
        scalar b = promote(rvalue(*e.kids[1]));
        if (a.is_pointer() || b.is_pointer()) {
            return pointer_binary(op, a, b);
        }
        if (op == "<<" || op == ">>") {
            // The promoted left operand's type; a count out of range is refused at run time
            // by the agent only for >= 64, so the debugger decides any other odd count.
            const expression& count = *e.kids[1];
            if (count.k != expression::kind::integer || count.ival >= a.size * 8) {
                throw refused{"a shift by a count that is not a small constant"};
            }
            out_.op(op == "<<" ? OMPDBG_OP_SHL : (a.is_signed ? OMPDBG_OP_SHR_S : OMPDBG_OP_SHR_U));
            out_.normalise(a.size, a.is_signed);
            return a;
        }
        scalar c = common_type(a, b);
        static const std::map<std::string, std::pair<ompdbg_agent_op, ompdbg_agent_op>> arith{
            {"+", {OMPDBG_OP_ADD, OMPDBG_OP_ADD}},     {"-", {OMPDBG_OP_SUB, OMPDBG_OP_SUB}},
            {"*", {OMPDBG_OP_MUL, OMPDBG_OP_MUL}},     {"/", {OMPDBG_OP_DIV_S, OMPDBG_OP_DIV_U}},
            {"%", {OMPDBG_OP_REM_S, OMPDBG_OP_REM_U}}, {"&", {OMPDBG_OP_AND, OMPDBG_OP_AND}},
            {"|", {OMPDBG_OP_OR, OMPDBG_OP_OR}},       {"^", {OMPDBG_OP_XOR, OMPDBG_OP_XOR}},
        };
        // unsigned long with a narrower operand: that one was extended by its own
        // signedness, as C converts it (int -1 → 0xffff...ffff); nothing to do.
        if (c.size == 4 && !c.is_signed) {
            // unsigned int: an int operand converted to unsigned is its low 32 bits.
            emit_rezext_both();
        }
        if (auto it = arith.find(op); it != arith.end()) {
            out_.op(c.is_signed ? it->second.first : it->second.second);
            out_.normalise(c.size, c.is_signed);
            return c;
        }
        compare(op, c.is_signed);
        return scalar{4, true, {}};
    }

    /// Zero-extends both operands from 32 bits (int converted to unsigned int).
    void emit_rezext_both() {
        out_.op8(OMPDBG_OP_ZEXT, 32);
        out_.op(OMPDBG_OP_SWAP);
        out_.op8(OMPDBG_OP_ZEXT, 32);
        out_.op(OMPDBG_OP_SWAP);
    }

    void compare(const std::string& op, bool is_signed) {
        ompdbg_agent_op lt = is_signed ? OMPDBG_OP_LT_S : OMPDBG_OP_LT_U;
        ompdbg_agent_op le = is_signed ? OMPDBG_OP_LE_S : OMPDBG_OP_LE_U;
        if (op == "==") {
            out_.op(OMPDBG_OP_EQ);
        } else if (op == "!=") {
            out_.op(OMPDBG_OP_NE);
        } else if (op == "<") {
            out_.op(lt);
        } else if (op == "<=") {
            out_.op(le);
        } else if (op == ">") {
            out_.op(le);
            out_.op(OMPDBG_OP_LNOT);
        } else if (op == ">=") {
            out_.op(lt);
            out_.op(OMPDBG_OP_LNOT);
        } else {
            throw refused{"an operator the agent does not evaluate"};
        }
    }

    scalar pointer_binary(const std::string& op, scalar a, scalar b) {
        if (a.is_pointer() && b.is_pointer()) {
            if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
                compare(op, false);
                return scalar{4, true, {}};
            }
            throw refused{"pointer arithmetic the agent does not do"};
        }
        if (a.is_pointer() && (op == "+" || op == "-") && a.pointee->size() > 0) {
            out_.constant(a.pointee->size());
            out_.op(OMPDBG_OP_MUL);
            out_.op(op == "+" ? OMPDBG_OP_ADD : OMPDBG_OP_SUB);
            return a;
        }
        if (op == "==" || op == "!=") {
            // A pointer compared with an integer (p != 0).
            compare(op, false);
            return scalar{4, true, {}};
        }
        throw refused{"pointer arithmetic the agent does not do"};
    }

    const debug_info& info_;
    agent::locator locator_;
    std::uint64_t file_pc_;
    emitter own_;
    emitter& out_;   ///< own_, or the code of the condition a caller field is part of
    const std::vector<agent_caller_field>& fields_;
    /// The address the last lvalue left is known to be mapped (see lvalue's identifier).
    bool mapped_ = false;
};

}  // namespace

agent_compile_result compile_agent_condition(std::string_view text, const debug_info& info, std::uint64_t file_pc,
                                             std::uint64_t load_bias, const agent_compile_options& options) {
    agent_compile_result r;
    try {
        auto e = parse_expression(text, nullptr);
        compiler c(info, file_pc, load_bias, options);
        r.code = c.run(*e, r.pointer);
    } catch (const refused& why) {
        r.code.clear();
        r.reason = why.why;
    } catch (const std::exception& ex) {
        r.code.clear();
        r.reason = "not understood here";
    }
    return r;
}

}  // namespace ompdbg::dwarf
