// A condition's bytecode parsed into a tree (internal/native_tree.hpp).

#include "internal/native_tree.hpp"

#include "ompdbg/agent/agent_abi.h"

#include <cstring>

namespace ompdbg::tracer::internal {

namespace {

std::uint64_t extend(std::uint64_t v, unsigned bits, bool is_signed) {   // as the agent's extend
    if (bits == 0 || bits >= 64) {
        return v;
    }
    std::uint64_t mask = (1ull << bits) - 1;
    v &= mask;
    if (is_signed && ((v >> (bits - 1)) & 1u) != 0) {
        v |= ~mask;
    }
    return v;
}

/// The bytecode as a tree, when it is one: straight-line code and the JZ/JMP diamonds of
/// &&, || and ?: (agent_expr.cpp), with the interpreter's stack limit checked.
class parser {
public:
    parser(std::span<const std::uint8_t> code, std::uint64_t site) : code_(code), site_(site) {}

    /// The root, or -1 when the bytecode is of another shape.
    int run() {
        std::vector<int> stack;
        std::uint32_t pc = 0;
        int root = -1;
        if (!region(pc, static_cast<std::uint32_t>(code_.size()), stack, 0, &root)) {
            return -1;
        }
        return root;
    }
    const std::vector<node>& nodes() const { return nodes_; }

private:
    int add(const node& n) {
        nodes_.push_back(n);
        return static_cast<int>(nodes_.size()) - 1;
    }
    int constant(std::uint64_t v) {
        node n;
        n.value = v;
        return add(n);
    }
    bool is_const(int x) const { return nodes_[static_cast<std::size_t>(x)].kind == node_kind::constant; }
    std::uint64_t value(int x) const { return nodes_[static_cast<std::size_t>(x)].value; }
    /// A full register, usable as an address base.
    bool is_base(int x) const {
        const node& n = nodes_[static_cast<std::size_t>(x)];
        return n.kind == node_kind::address || (n.kind == node_kind::reg && n.width == 64);
    }
    int offset(int x, std::uint64_t d) {
        node n = nodes_[static_cast<std::size_t>(x)];
        n.value = n.kind == node_kind::address ? n.value + d : d;
        n.kind = node_kind::address;
        n.width = 64;
        return add(n);
    }

    /// LOAD_FRAME of `x` (an address, a full register or a constant address).
    int load(int x, unsigned size) {
        if (size != 1 && size != 2 && size != 4 && size != 8) {
            return -1;
        }
        node n = nodes_[static_cast<std::size_t>(x)];
        if (n.kind == node_kind::constant) {
            n.reg = absolute;
        } else if (n.kind == node_kind::reg && n.width == 64) {
            n.value = 0;
        } else if (n.kind != node_kind::address) {
            return -1;
        }
        n.kind = node_kind::mem;
        n.width = 8 * size;
        n.is_signed = false;   // LOAD_FRAME zero-extends
        return add(n);
    }

    /// SEXT/ZEXT of `x` from `bits`.
    int ext(int x, unsigned bits, bool is_signed) {
        node n = nodes_[static_cast<std::size_t>(x)];
        if (bits == 0 || bits >= 64) {
            return x;
        }
        switch (n.kind) {
        case node_kind::constant: return constant(extend(n.value, bits, is_signed));
        case node_kind::compare:
        case node_kind::lnot: return (bits > 1 || !is_signed) ? x : -1;   // 0 or 1
        case node_kind::reg:
        case node_kind::mem:
            if (bits < n.width || (bits == n.width && n.is_signed != is_signed)) {
                if (bits != 8 && bits != 16 && bits != 32) {
                    return -1;
                }
                n.width = bits;   // the low bits, read narrower
                n.is_signed = is_signed;
                return add(n);
            }
            // Already extended from `width` <= bits: zero-extended stays, and so does
            // sign-extended under a sign extension; zero-extending a sign extension does not.
            return (!n.is_signed || is_signed || bits == n.width) ? x : -1;
        default: return -1;
        }
    }

    int binary(std::uint8_t op, int a, int b) {
        if (op >= OMPDBG_OP_EQ && op <= OMPDBG_OP_LE_U) {
            node n;
            n.kind = node_kind::compare;
            n.op = op;
            n.a = a;
            n.b = b;
            return add(n);
        }
        if (is_const(a) && is_const(b)) {
            std::uint64_t x = value(a), y = value(b);
            switch (op) {
            case OMPDBG_OP_ADD: return constant(x + y);
            case OMPDBG_OP_SUB: return constant(x - y);
            case OMPDBG_OP_MUL: return constant(x * y);
            case OMPDBG_OP_AND: return constant(x & y);
            case OMPDBG_OP_OR: return constant(x | y);
            case OMPDBG_OP_XOR: return constant(x ^ y);
            default: return -1;   // division, shifts: undecided cases stay the stack compiler's
            }
        }
        if (op == OMPDBG_OP_ADD && is_base(a) && is_const(b)) {
            return offset(a, value(b));
        }
        if (op == OMPDBG_OP_ADD && is_const(a) && is_base(b)) {
            return offset(b, value(a));
        }
        if (op == OMPDBG_OP_SUB && is_base(a) && is_const(b)) {
            return offset(a, 0 - value(b));
        }
        return -1;
    }

    /// Parses [pc, end) onto `st` (`outer` words below it on the interpreter's stack). The
    /// whole program (root given) must end with its only END.
    bool region(std::uint32_t& pc, std::uint32_t end, std::vector<int>& st, unsigned outer, int* root) {
        auto room = [&] { return outer + st.size() < OMPDBG_AGENT_STACK_DEPTH; };
        auto pop = [&] {
            int x = st.back();
            st.pop_back();
            return x;
        };
        auto push = [&](int x) {
            st.push_back(x);
            return x >= 0;
        };
        while (pc < end) {
            std::uint8_t op = code_[pc++];
            switch (op) {
            case OMPDBG_OP_END:
                if (root == nullptr || st.empty() || pc != end) {
                    return false;
                }
                *root = st.back();
                return true;
            case OMPDBG_OP_CONST: {
                if (pc + 8 > end || !room()) {
                    return false;
                }
                std::uint64_t v;
                std::memcpy(&v, code_.data() + pc, 8);
                pc += 8;
                push(constant(v));
                break;
            }
            case OMPDBG_OP_REG: {
                if (pc + 1 > end || !room()) {
                    return false;
                }
                unsigned r = code_[pc++];
                if (r == 16) {
                    push(constant(site_));
                } else if (r < 16) {
                    node n;
                    n.kind = node_kind::reg;
                    n.reg = static_cast<int>(r);
                    push(add(n));
                } else {
                    return false;   // the flags
                }
                break;
            }
            case OMPDBG_OP_TP: {
                if (!room()) {
                    return false;
                }
                node n;
                n.kind = node_kind::address;
                n.reg = fs_base;
                push(add(n));
                break;
            }
            case OMPDBG_OP_LOAD_FRAME:
            case OMPDBG_OP_SEXT:
            case OMPDBG_OP_ZEXT: {
                if (pc + 1 > end || st.empty()) {
                    return false;
                }
                unsigned arg = code_[pc++];
                int x = pop();
                if (!push(op == OMPDBG_OP_LOAD_FRAME ? load(x, arg) : ext(x, arg, op == OMPDBG_OP_SEXT))) {
                    return false;
                }
                break;
            }
            case OMPDBG_OP_NEG:
            case OMPDBG_OP_NOT:
            case OMPDBG_OP_LNOT: {
                if (st.empty()) {
                    return false;
                }
                int x = pop();
                if (is_const(x)) {
                    std::uint64_t v = value(x);
                    push(constant(op == OMPDBG_OP_NEG ? 0 - v : op == OMPDBG_OP_NOT ? ~v : v == 0));
                } else if (op == OMPDBG_OP_LNOT) {
                    node n;
                    n.kind = node_kind::lnot;
                    n.a = x;
                    push(add(n));
                } else {
                    return false;
                }
                break;
            }
            case OMPDBG_OP_DUP:
                if (st.empty() || !room()) {
                    return false;
                }
                push(st.back());
                break;
            case OMPDBG_OP_POP:
                if (st.empty()) {
                    return false;
                }
                pop();
                break;
            case OMPDBG_OP_SWAP:
                if (st.size() < 2) {
                    return false;
                }
                std::swap(st[st.size() - 1], st[st.size() - 2]);
                break;
            case OMPDBG_OP_JZ: {
                // c JZ L1; x JMP L2; L1: y; L2: — c ? x : y, each branch one value.
                if (pc + 2 > end || st.empty()) {
                    return false;
                }
                std::uint32_t l1 = code_[pc] | (static_cast<std::uint32_t>(code_[pc + 1]) << 8);
                pc += 2;
                if (l1 < pc + 3 || l1 > end || code_[l1 - 3] != OMPDBG_OP_JMP) {
                    return false;
                }
                std::uint32_t l2 = code_[l1 - 2] | (static_cast<std::uint32_t>(code_[l1 - 1]) << 8);
                if (l2 <= l1 || l2 > end) {
                    return false;
                }
                node n;
                n.kind = node_kind::ternary;
                n.c = pop();
                const auto below = outer + static_cast<unsigned>(st.size());
                std::vector<int> x, y;
                std::uint32_t p = pc, q = l1;
                if (!region(p, l1 - 3, x, below, nullptr) || p != l1 - 3 || x.size() != 1 ||
                    !region(q, l2, y, below, nullptr) || y.size() != 1) {
                    return false;
                }
                n.a = x[0];
                n.b = y[0];
                push(add(n));
                pc = l2;
                break;
            }
            default: {
                if (st.size() < 2) {
                    return false;
                }
                int b = pop();
                int a = pop();
                if (!push(binary(op, a, b))) {
                    return false;
                }
                break;
            }
            }
        }
        return root == nullptr;   // the program ran off its end: undecided, the stack compiler's
    }

    std::span<const std::uint8_t> code_;
    std::uint64_t site_;
    std::vector<node> nodes_;
};

}  // namespace

condition_tree parse_condition_tree(std::span<const std::uint8_t> bytecode, std::uint64_t site) {
    parser p(bytecode, site);
    condition_tree t;
    t.root = p.run();
    t.nodes = p.nodes();
    return t;
}

}  // namespace ompdbg::tracer::internal
