#include "ompdbg/dwarf/location.hpp"

#include "ompdbg/base/error.hpp"

#include "internal/die_util.hpp"

#include <cstring>
#include <fmt/format.h>

#include <dwarf.h>

namespace ompdbg::dwarf {

namespace {

using internal::ref_attr;

[[noreturn]] void malformed(const char* why) {
    error::send(fmt::format("Malformed DWARF location expression: {}", why));
}

// The register a single-operation location names (DW_OP_regN / DW_OP_regx), else -1.
int single_register(const Dwarf_Op* ops, std::size_t n) {
    if (n != 1) {
        return -1;
    }
    if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
        return ops[0].atom - DW_OP_reg0;
    }
    return ops[0].atom == DW_OP_regx ? static_cast<int>(ops[0].number) : -1;
}

// One DWARF expression on a stack of 64-bit generic values (DWARF 5 section 2.5).
class expr_machine {
public:
    /// Thrown when a value cannot be recovered at this pc (shown as <optimized out>).
    struct unavailable {};

    expr_machine(const location_context& ctx, Dwarf_Attribute* attr, const variable& var)
        : ctx_(ctx), attr_(attr), var_(var) {}

    location run(const Dwarf_Op* ops, std::size_t n);
    /// Evaluates the frame base of the variable's function to an address.
    std::uint64_t frame_base();

private:
    std::uint64_t pop() {
        if (stack_.empty()) malformed("stack underflow");
        std::uint64_t v = stack_.back();
        stack_.pop_back();
        return v;
    }
    void push(std::uint64_t v) {
        if (stack_.size() > 1024) malformed("stack overflow");
        stack_.push_back(v);
    }
    std::uint64_t reg(int regno) const {
        auto v = ctx_.read_register(regno);
        if (!v) throw unavailable{};
        return *v;
    }
    std::uint64_t read(std::uint64_t addr, std::size_t size) const {
        if (size == 0 || size > 8) malformed("bad deref size");
        std::uint64_t v = 0;
        ctx_.read_memory(addr, std::span<std::byte>(reinterpret_cast<std::byte*>(&v), size));
        return v;
    }

    const location_context& ctx_;
    Dwarf_Attribute* attr_;
    const variable& var_;
    std::vector<std::uint64_t> stack_;
    int depth_ = 0;
};

location expr_machine::run(const Dwarf_Op* ops, std::size_t n) {
    location::pieces pieces;
    using where_t = std::variant<location::memory, location::register_, location::implicit_value,
                                 location::optimized_out>;
    std::optional<where_t> pending;   // set by reg*/stack_value/implicit_value
    std::size_t steps = 0;
    std::size_t piece_start_ops = 0;  // number of ops at the start of the current piece
    std::size_t ops_in_piece = 0;
    (void)piece_start_ops;

    auto finish = [&]() -> where_t {
        if (pending) {
            return *pending;
        }
        if (ops_in_piece == 0) {
            return location::optimized_out{};
        }
        return location::memory{pop()};
    };

    for (std::size_t i = 0; i < n; ++i) {
        if (++steps > 100000) malformed("too many operations (a loop?)");
        const Dwarf_Op& op = ops[i];
        std::uint8_t atom = op.atom;
        if (pending && atom != DW_OP_piece && atom != DW_OP_bit_piece) {
            malformed("operation after a register or implicit location");
        }
        if (atom != DW_OP_piece && atom != DW_OP_bit_piece) {
            ++ops_in_piece;
        }
        if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
            push(atom - DW_OP_lit0);
            continue;
        }
        if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
            pending = location::register_{atom - DW_OP_reg0};
            continue;
        }
        if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
            push(reg(atom - DW_OP_breg0) + op.number);
            continue;
        }
        switch (atom) {
        case DW_OP_addr:
            // A TLS offset is written with DW_OP_addr by some producers: no bias then.
            if (i + 1 < n && (ops[i + 1].atom == DW_OP_GNU_push_tls_address ||
                              ops[i + 1].atom == DW_OP_form_tls_address)) {
                push(op.number);
            } else {
                push(op.number + ctx_.load_bias());
            }
            break;
        case DW_OP_addrx: case DW_OP_GNU_addr_index: case DW_OP_constx: case DW_OP_GNU_const_index: {
            Dwarf_Attribute a;
            Dwarf_Addr v = 0;
            if (dwarf_getlocation_attr(attr_, &op, &a) != 0 || dwarf_formaddr(&a, &v) != 0) {
                malformed("bad address index");
            }
            bool is_const = atom == DW_OP_constx || atom == DW_OP_GNU_const_index;
            bool tls_next = i + 1 < n && (ops[i + 1].atom == DW_OP_GNU_push_tls_address ||
                                          ops[i + 1].atom == DW_OP_form_tls_address);
            push(is_const || tls_next ? v : v + ctx_.load_bias());
            break;
        }
        case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
        case DW_OP_constu:
        case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
        case DW_OP_consts:
            push(op.number);
            break;
        case DW_OP_regx:
            pending = location::register_{static_cast<int>(op.number)};
            break;
        case DW_OP_bregx:
            push(reg(static_cast<int>(op.number)) + op.number2);
            break;
        case DW_OP_fbreg:
            push(frame_base() + op.number);
            break;
        case DW_OP_call_frame_cfa: {
            auto cfa = ctx_.cfa();
            if (!cfa) error::send("Could not compute the CFA of the frame");
            push(*cfa);
            break;
        }
        case DW_OP_dup: { auto v = pop(); push(v); push(v); break; }
        case DW_OP_drop: pop(); break;
        case DW_OP_over: {
            if (stack_.size() < 2) malformed("stack underflow");
            push(stack_[stack_.size() - 2]);
            break;
        }
        case DW_OP_pick: {
            if (op.number >= stack_.size()) malformed("stack underflow");
            push(stack_[stack_.size() - 1 - op.number]);
            break;
        }
        case DW_OP_swap: { auto a = pop(), b = pop(); push(a); push(b); break; }
        case DW_OP_rot: {
            auto a = pop(), b = pop(), c = pop();
            push(a); push(c); push(b);
            break;
        }
        case DW_OP_deref: push(read(pop(), 8)); break;
        case DW_OP_deref_size: push(read(pop(), op.number)); break;
        case DW_OP_abs: { auto v = static_cast<std::int64_t>(pop()); push(v < 0 ? -v : v); break; }
        case DW_OP_neg: push(-pop()); break;
        case DW_OP_not: push(~pop()); break;
        case DW_OP_plus_uconst: push(pop() + op.number); break;
        case DW_OP_and: { auto b = pop(), a = pop(); push(a & b); break; }
        case DW_OP_or: { auto b = pop(), a = pop(); push(a | b); break; }
        case DW_OP_xor: { auto b = pop(), a = pop(); push(a ^ b); break; }
        case DW_OP_plus: { auto b = pop(), a = pop(); push(a + b); break; }
        case DW_OP_minus: { auto b = pop(), a = pop(); push(a - b); break; }
        case DW_OP_mul: { auto b = pop(), a = pop(); push(a * b); break; }
        case DW_OP_div: {
            auto b = static_cast<std::int64_t>(pop()), a = static_cast<std::int64_t>(pop());
            if (b == 0) malformed("division by zero");
            push(static_cast<std::uint64_t>(a / b));
            break;
        }
        case DW_OP_mod: {
            auto b = pop(), a = pop();
            if (b == 0) malformed("division by zero");
            push(a % b);
            break;
        }
        case DW_OP_shl: { auto b = pop(), a = pop(); push(b >= 64 ? 0 : a << b); break; }
        case DW_OP_shr: { auto b = pop(), a = pop(); push(b >= 64 ? 0 : a >> b); break; }
        case DW_OP_shra: {
            auto b = pop();
            auto a = static_cast<std::int64_t>(pop());
            push(static_cast<std::uint64_t>(b >= 64 ? (a < 0 ? -1 : 0) : a >> b));
            break;
        }
        case DW_OP_eq: { auto b = pop(), a = pop(); push(a == b); break; }
        case DW_OP_ne: { auto b = pop(), a = pop(); push(a != b); break; }
        case DW_OP_lt: { auto b = std::int64_t(pop()), a = std::int64_t(pop()); push(a < b); break; }
        case DW_OP_le: { auto b = std::int64_t(pop()), a = std::int64_t(pop()); push(a <= b); break; }
        case DW_OP_gt: { auto b = std::int64_t(pop()), a = std::int64_t(pop()); push(a > b); break; }
        case DW_OP_ge: { auto b = std::int64_t(pop()), a = std::int64_t(pop()); push(a >= b); break; }
        case DW_OP_skip: case DW_OP_bra: {
            if (atom == DW_OP_bra && pop() == 0) {
                break;
            }
            // libdw gives the operand; the target is relative to the next operation.
            std::uint64_t target = op.offset + 3 + static_cast<std::int16_t>(op.number);
            std::size_t k = 0;
            while (k < n && ops[k].offset != target) ++k;
            if (k == n) {
                // Branching to the end finishes the expression.
                bool to_end = n > 0 && target > ops[n - 1].offset;
                if (!to_end) malformed("branch to the middle of an operation");
                i = n - 1;
                break;
            }
            i = k - 1;
            break;
        }
        case DW_OP_nop: break;
        case DW_OP_stack_value:
            pending = location::implicit_value{};
            {
                std::uint64_t v = pop();
                std::size_t size = var_.var_type.is_void() ? 8 : var_.var_type.size();
                if (size == 0 || size > 8) size = 8;
                std::vector<std::byte> bytes(size);
                std::memcpy(bytes.data(), &v, size);
                pending = location::implicit_value{std::move(bytes)};
            }
            break;
        case DW_OP_implicit_value: {
            Dwarf_Block block;
            if (dwarf_getlocation_implicit_value(attr_, &op, &block) != 0) {
                malformed("bad DW_OP_implicit_value");
            }
            auto* p = reinterpret_cast<const std::byte*>(block.data);
            pending = location::implicit_value{std::vector<std::byte>(p, p + block.length)};
            break;
        }
        case DW_OP_GNU_push_tls_address: case DW_OP_form_tls_address: {
            auto off = pop();
            auto a = ctx_.tls_address(off);
            if (!a) error::send("Cannot find thread-local variables on this target");
            push(*a);
            break;
        }
        case DW_OP_piece: case DW_OP_bit_piece: {
            std::uint64_t bytes = op.number;
            if (atom == DW_OP_bit_piece) {
                if (op.number % 8 != 0 || op.number2 != 0) {
                    error::send("Unsupported DW_OP_bit_piece of a partial byte");
                }
                bytes = op.number / 8;
            }
            pieces.push_back(location::piece{finish(), bytes});
            pending.reset();
            stack_.clear();
            ops_in_piece = 0;
            break;
        }
        case DW_OP_entry_value: case DW_OP_GNU_entry_value: {
            // The value of a register on entry to the function: only DW_OP_regN (gdb's rule).
            Dwarf_Attribute block;
            Dwarf_Op* sub = nullptr;
            std::size_t sub_n = 0;
            if (attr_ == nullptr || dwarf_getlocation_attr(attr_, &op, &block) != 0 ||
                dwarf_getlocation(&block, &sub, &sub_n) != 0) {
                throw unavailable{};
            }
            int regno = single_register(sub, sub_n);
            auto v = regno >= 0 ? ctx_.entry_register_value(regno) : std::nullopt;
            if (!v) {
                throw unavailable{};
            }
            push(*v);
            break;
        }
        case DW_OP_GNU_parameter_ref:
        case DW_OP_implicit_pointer: case DW_OP_GNU_implicit_pointer:
            // Values we cannot recover at this pc: gdb shows <optimized out>.
            throw unavailable{};
        default:
            error::send(fmt::format("Unhandled dwarf expression opcode 0x{:x}", atom));
        }
    }
    if (!pieces.empty()) {
        if (ops_in_piece != 0) {
            malformed("operations after the last piece");
        }
        return location{std::move(pieces)};
    }
    if (n == 0) {
        return location{location::optimized_out{}};
    }
    where_t w = finish();
    return std::visit([](auto&& x) { return location{x}; }, w);
}

std::uint64_t expr_machine::frame_base() {
    if (++depth_ > 4) malformed("recursive frame base");
    if (!var_.frame_base_die) {
        malformed("DW_OP_fbreg outside a function");
    }
    Dwarf_Die fn = *var_.frame_base_die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&fn, DW_AT_frame_base, &attr) == nullptr) {
        malformed("function without DW_AT_frame_base");
    }
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    std::uint64_t pc = ctx_.pc() - ctx_.load_bias();
    int got = dwarf_getlocation_addr(&attr, pc, &ops, &n, 1);
    if (got <= 0 || n == 0) {
        throw unavailable{};
    }
    expr_machine sub(ctx_, &attr, var_);
    sub.depth_ = depth_;
    location loc = sub.run(ops, n);
    if (auto* r = std::get_if<location::register_>(&loc.value)) {
        return reg(r->dwarf_regno);   // DW_OP_reg6: the frame base is rbp's value
    }
    if (auto* m = std::get_if<location::memory>(&loc.value)) {
        return m->addr;
    }
    throw unavailable{};
}

// The name a DIE (or the declaration/abstract origin it refers to) carries.
std::string die_name(Dwarf_Die die) {
    const char* name = dwarf_diename(&die);
    Dwarf_Attribute attr;
    if (name == nullptr && dwarf_attr_integrate(&die, DW_AT_name, &attr) != nullptr) {
        name = dwarf_formstring(&attr);
    }
    return name != nullptr ? name : "";
}

// The DW_TAG_call_site among `scope`'s descendants whose return address is `return_pc`
// (file address): DWARF 5's DW_AT_call_return_pc, or the GNU extension's DW_AT_low_pc.
std::optional<Dwarf_Die> find_call_site(Dwarf_Die scope, std::uint64_t return_pc, int depth = 0) {
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(&scope, &child) != 0) {
        return std::nullopt;
    }
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
            Dwarf_Attribute attr;
            Dwarf_Addr at = 0;
            bool found = (dwarf_attr(&child, DW_AT_call_return_pc, &attr) != nullptr ||
                          dwarf_attr(&child, DW_AT_low_pc, &attr) != nullptr) &&
                         dwarf_formaddr(&attr, &at) == 0 && at == return_pc;
            if (found) {
                return child;
            }
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
            if (auto d = find_call_site(child, return_pc, depth + 1)) {
                return d;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return std::nullopt;
}

// The value of a DWARF expression (DW_AT_call_value, DW_AT_call_target) run in the
// caller's frame; nullopt when it needs what the frame does not have.
std::optional<std::uint64_t> value_in_caller(const location_context& caller, Dwarf_Attribute* attr,
                                             std::optional<Dwarf_Die> frame_base_die) {
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_getlocation(attr, &ops, &n) != 0 || n == 0) {
        return std::nullopt;
    }
    variable where;
    where.frame_base_die = frame_base_die;
    expr_machine m(caller, attr, where);
    try {
        location loc = m.run(ops, n);
        if (auto* r = std::get_if<location::register_>(&loc.value)) {
            return caller.read_register(r->dwarf_regno);
        }
        if (auto* mem = std::get_if<location::memory>(&loc.value)) {
            return mem->addr;   // a value expression: the top of the stack is the value
        }
        if (auto* iv = std::get_if<location::implicit_value>(&loc.value); iv != nullptr && iv->bytes.size() <= 8) {
            std::uint64_t v = 0;
            std::memcpy(&v, iv->bytes.data(), iv->bytes.size());
            return v;
        }
    } catch (const expr_machine::unavailable&) {
    }
    return std::nullopt;
}

// gdb's check before it trusts a call site's parameters (dwarf2/loc.c,
// dwarf_expr_reg_to_entry_parameter): a call site without DW_AT_call_origin must name its
// target with DW_AT_call_target, and that expression, run in the caller's frame, must give
// the callee's entry. Registers the call clobbered usually make it unknown, and then
// gdb prints a parameter without its "@entry" value.
bool call_target_is(const location_context& caller, Dwarf_Die site, std::uint64_t callee_entry) {
    Dwarf_Attribute attr;
    if (dwarf_attr(&site, DW_AT_call_target, &attr) == nullptr &&
        dwarf_attr(&site, DW_AT_GNU_call_site_target, &attr) == nullptr) {
        return false;
    }
    auto target = value_in_caller(caller, &attr, std::nullopt);
    return target && *target == callee_entry;
}

}  // namespace

std::optional<std::uint64_t> call_site_parameter_value(const debug_info& caller_info, const location_context& caller,
                                                       std::uint64_t return_pc, const std::string& callee_name,
                                                       std::uint64_t callee_entry, int dwarf_regno) {
    const std::uint64_t bias = caller.load_bias();
    auto chain = caller_info.function_chain_at(caller.pc() - bias);
    if (chain.empty() || return_pc < bias) {
        return std::nullopt;
    }
    Dwarf_Die fn = chain.back().die;   // the subprogram: call sites may sit in any inner scope
    auto site = find_call_site(fn, return_pc - bias);
    if (!site) {
        return std::nullopt;
    }
    Dwarf_Attribute attr;
    Dwarf_Die origin;
    if ((dwarf_attr(&*site, DW_AT_call_origin, &attr) != nullptr ||
         dwarf_attr(&*site, DW_AT_abstract_origin, &attr) != nullptr) &&
        dwarf_formref_die(&attr, &origin) != nullptr) {
        std::string called = die_name(origin);
        std::string plain = callee_name.substr(callee_name.rfind("::") == std::string::npos ? 0 : callee_name.rfind("::") + 2);
        if (!called.empty() && called != plain) {
            return std::nullopt;   // reached through a tail call from another function
        }
    } else if (!call_target_is(caller, *site, callee_entry)) {
        return std::nullopt;   // an indirect call that cannot be shown to reach the callee
    }
    Dwarf_Die param;
    if (dwarf_child(&*site, &param) != 0) {
        return std::nullopt;
    }
    do {
        int tag = dwarf_tag(&param);
        if (tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter) {
            continue;
        }
        Dwarf_Op* ops = nullptr;
        std::size_t n = 0;
        if (dwarf_attr(&param, DW_AT_location, &attr) == nullptr || dwarf_getlocation(&attr, &ops, &n) != 0 ||
            single_register(ops, n) != dwarf_regno) {
            continue;
        }
        if (dwarf_attr(&param, DW_AT_call_value, &attr) == nullptr &&
            dwarf_attr(&param, DW_AT_GNU_call_site_value, &attr) == nullptr) {
            return std::nullopt;
        }
        // The value expression runs in the caller's frame (its frame base for DW_OP_fbreg).
        return value_in_caller(caller, &attr, chain.back().frame_base_die);
    } while (dwarf_siblingof(&param, &param) == 0);
    return std::nullopt;
}

std::optional<std::uint64_t> parameter_entry_value(const variable& param, std::uint64_t entry_pc,
                                                   const location_context& ctx) {
    Dwarf_Die die = param.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr || entry_pc < ctx.load_bias()) {
        return std::nullopt;
    }
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_getlocation_addr(&attr, entry_pc - ctx.load_bias(), &ops, &n, 1) <= 0) {
        return std::nullopt;
    }
    int regno = single_register(ops, n);
    return regno >= 0 ? ctx.entry_register_value(regno) : std::nullopt;
}

location evaluate_location(const variable& var, const location_context& ctx) {
    Dwarf_Die die = var.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr) {
        // A constant folded by the compiler.
        if (dwarf_attr_integrate(&die, DW_AT_const_value, &attr) != nullptr) {
            std::size_t size = var.var_type.is_void() ? 8 : var.var_type.size();
            Dwarf_Block block;
            if (dwarf_formblock(&attr, &block) == 0) {
                auto* p = reinterpret_cast<const std::byte*>(block.data);
                return location{location::implicit_value{std::vector<std::byte>(p, p + block.length)}};
            }
            Dwarf_Sword s = 0;
            Dwarf_Word u = 0;
            std::uint64_t v = 0;
            if (dwarf_formsdata(&attr, &s) == 0) {
                v = static_cast<std::uint64_t>(s);
            } else if (dwarf_formudata(&attr, &u) == 0) {
                v = u;
            } else {
                malformed("bad DW_AT_const_value");
            }
            if (size == 0 || size > 8) size = 8;
            std::vector<std::byte> bytes(size);
            std::memcpy(bytes.data(), &v, size);
            return location{location::implicit_value{std::move(bytes)}};
        }
        return location{location::optimized_out{}};
    }
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    std::uint64_t pc = ctx.pc() - ctx.load_bias();
    int got = dwarf_getlocation_addr(&attr, pc, &ops, &n, 1);
    if (got < 0) {
        malformed(dwarf_errmsg(-1));
    }
    if (got == 0) {
        return location{location::optimized_out{}};
    }
    expr_machine m(ctx, &attr, var);
    try {
        return m.run(ops, n);
    } catch (const expr_machine::unavailable&) {
        return location{location::optimized_out{}};
    }
}

}  // namespace ompdbg::dwarf
