// The direct form of a native condition (internal/native_direct.hpp). The bytecode is
// parsed into a tree at compile time (its stack resolved there: DUP, SWAP, POP and constant
// folding cost nothing at run time), then each comparison becomes one `cmp` of a register,
// a memory operand or a scratch register against an immediate or a register, and one
// conditional jump. Two ways to keep the site's flags:
//   - an ==/!= (or a value's truth) does without the flags: its difference is computed into
//     %rcx with lea and tested with jrcxz;
//   - anything else saves %rax and keeps the flags in %ax (lahf/seto), given back with sahf;
//     where they are dead at the site (flags_dead_at) a false condition skips that. A true
//     one always gives them back: the stop shows them as at the site.
// (pushfq, even with popfq only on the rare true path, costs more than either on the AMD
// EPYC machines of this project: 20M false `i == -5` took 1.2 ns more CPU a pass with it.)
// Scratch registers are the ones the condition does not read, saved only when used.

#include "internal/native_direct.hpp"
#include "internal/code_buffer.hpp"
#include "internal/native_tree.hpp"

#include "ompdbg/agent/agent_abi.h"

#include <algorithm>
#include <array>
#include <vector>

namespace ompdbg::tracer::internal {

namespace {

bool fits32(std::uint64_t v) {
    auto s = static_cast<std::int64_t>(v);
    return s >= INT32_MIN && s <= INT32_MAX;
}

/// DWARF register number → machine register number.
int machine(int dwarf) {
    static constexpr int map[16] = {0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15};
    return map[dwarf];
}

constexpr int rax = 0, rcx = 1, rsp = 4;

/// How the flags are kept (see the file's comment).
enum class mode { no_flags, flags_in_ax };

/// A register or memory operand: a machine register, or [base + disp] (base a machine
/// register or absolute), %fs-relative or not.
struct operand {
    bool is_reg = false;
    int reg = 0;
    int base = absolute;
    bool fs = false;
    std::int32_t disp = 0;
};

operand in_reg(int r) {
    operand o;
    o.is_reg = true;
    o.reg = r;
    return o;
}

class generator {
public:
    generator(std::vector<node> nodes, int root, mode m, bool flags_dead, std::vector<int> pool, unsigned scratch)
        : nodes_(std::move(nodes)), root_(root), mode_(m), flags_dead_(flags_dead), pool_(std::move(pool)),
          scratch_(scratch) {
        node zero;
        zero_ = static_cast<int>(nodes_.size());
        nodes_.push_back(zero);
        pushed_ = scratch_ + (m == mode::no_flags ? 0 : 1);
    }

    /// The code, or nullopt when something does not fit this form.
    std::optional<native_filter> run() {
        if (mode_ == mode::flags_in_ax) {
            e_.save_flags_in_ax();
        }
        for (unsigned i = 0; i < scratch_; ++i) {
            push_pop(0x50, pool_[i]);
        }
        native_filter f;
        f.direct = true;
        if (mode_ == mode::no_flags) {
            if (!difference_in_rcx(f)) {
                return std::nullopt;
            }
        } else {
            int t = label(), fl = label();
            if (!cond(root_, t, fl, fl)) {
                return std::nullopt;
            }
            place(fl);
            false_exit(f);
            place(t);
            true_exit();
            for (auto [at, l] : fixups_) {
                e_.resolve(at, *labels_[static_cast<std::size_t>(l)]);
            }
        }
        if (e_.size() > budget) {
            return std::nullopt;
        }
        f.code = std::move(e_.code());
        return f;
    }
    unsigned scratch_used() const { return used_; }

private:
    static constexpr std::size_t budget = 320;   // bytes of a pad's 512 (jump_pad.hpp)

    const node& at(int x) const { return nodes_[static_cast<std::size_t>(x)]; }

    void push_pop(int opcode, int r) {   // push/pop %r (opcode 0x50 / 0x58)
        if (r >= 8) {
            e_.bytes({0x41});
        }
        e_.bytes({opcode + (r & 7)});
    }
    void pops() {
        for (unsigned i = scratch_; i-- > 0;) {
            push_pop(0x58, pool_[i]);
        }
    }
    /// The false exit: everything back (the flags unless dead), the red zone given back, on
    /// to the relocated instructions.
    void false_exit(native_filter& f) {
        pops();
        if (mode_ == mode::flags_in_ax) {
            if (!flags_dead_) {
                e_.restore_flags_from_ax();
            }
            e_.bytes({0x58});   // pop %rax
        }
        e_.lea_rsp(128);
        f.to_relocated = e_.disp32({0xe9});   // jmp relocated
    }
    /// The true exit: everything as at the site, falling into the pad's full path.
    void true_exit() {
        pops();
        if (mode_ == mode::flags_in_ax) {
            e_.restore_flags_from_ax();
            e_.bytes({0x58});   // pop %rax
        }
    }

    int label() {
        labels_.emplace_back();
        return static_cast<int>(labels_.size()) - 1;
    }
    void place(int l) { labels_[static_cast<std::size_t>(l)] = e_.size(); }
    void jump(int cc, int l) {   // jcc rel32 (cc: its second byte), or jmp rel32 (cc 0)
        fixups_.emplace_back(cc == 0 ? e_.disp32({0xe9}) : e_.disp32({0x0f, cc}), l);
    }

    /// Branches to `t` when `x` holds, to `f` otherwise; `next` is the label placed right
    /// after (no jump to it).
    bool cond(int x, int t, int f, int next) {
        if (e_.size() > budget || ++visits_ > 4096) {
            return false;   // DUP can make a tree exponential in the bytecode's length
        }
        const node& n = at(x);
        switch (n.kind) {
        case node_kind::lnot: return cond(n.a, f, t, next);
        case node_kind::ternary: {
            int lx = label(), ly = label();
            if (!cond(n.c, lx, ly, lx)) {
                return false;
            }
            place(lx);
            if (!cond(n.a, t, f, ly)) {
                return false;
            }
            place(ly);
            return cond(n.b, t, f, next);
        }
        case node_kind::constant: {
            int to = n.value != 0 ? t : f;
            if (to != next) {
                jump(0, to);
            }
            return true;
        }
        default: {
            int a = n.kind == node_kind::compare ? n.a : x;
            int b = n.kind == node_kind::compare ? n.b : zero_;
            std::uint8_t op = n.kind == node_kind::compare ? n.op : static_cast<std::uint8_t>(OMPDBG_OP_NE);
            static constexpr int cc[] = {0x84, 0x85, 0x8c, 0x82, 0x8e, 0x86};   // je jne jl jb jle jbe
            if (!compare(a, b)) {
                return false;
            }
            int c = cc[op - OMPDBG_OP_EQ];
            if (next == f) {
                jump(c, t);
            } else if (next == t) {
                jump(c ^ 1, f);
            } else {
                jump(c, t);
                jump(0, f);
            }
            return true;
        }
        }
    }

    /// cmp b,a (flags of a - b).
    bool compare(int a, int b) {
        unsigned k = 0;
        operand oa;
        if (!direct(at(a), oa)) {
            if (!scratch(k) || !materialize(at(a), pool_[k])) {
                return false;
            }
            oa = in_reg(pool_[k++]);
        }
        const node& nb = at(b);
        if (nb.kind == node_kind::constant && fits32(nb.value)) {
            insn({0x81}, true, 7, oa);   // cmp $imm32,a
            e_.u32(static_cast<std::uint32_t>(nb.value));
            return true;
        }
        operand ob;
        if (!direct(nb, ob) || !ob.is_reg) {
            if (!scratch(k) || !materialize(nb, pool_[k])) {
                return false;
            }
            ob = in_reg(pool_[k++]);
        }
        insn({0x39}, true, ob.reg, oa);   // cmp b,a
        return true;
    }

    /// The no-flags form: %rcx = a - b with lea (no flags changed), jrcxz. The root is an
    /// ==/!= or a value's truth, under any number of !.
    bool difference_in_rcx(native_filter& f) {
        bool equal_holds = false;   // the condition holds when a == b (else when a != b)
        int x = root_;
        while (at(x).kind == node_kind::lnot) {
            equal_holds = !equal_holds;
            x = at(x).a;
        }
        const node& n = at(x);
        int a = x, b = zero_;
        if (n.kind == node_kind::compare) {
            a = n.a;
            b = n.b;
            equal_holds ^= n.op == OMPDBG_OP_EQ;
        }
        if (!materialize(at(a), rcx)) {
            return false;
        }
        used_ = std::max(used_, 1u);
        const node& nb = at(b);
        if (nb.kind == node_kind::constant && fits32(0 - nb.value)) {
            e_.bytes({0x48, 0x8d, 0x89});   // lea -b(%rcx),%rcx
            e_.u32(static_cast<std::uint32_t>(0 - nb.value));
        } else {
            if (!scratch(1) || !materialize(nb, pool_[1])) {
                return false;
            }
            int s = pool_[1];
            insn({0xf7}, true, 2, in_reg(s));                             // not %s: -b - 1
            e_.bytes({0x48 | (s >= 8 ? 2 : 0), 0x8d, 0x4c, ((s & 7) << 3) | 1, 0x01});   // lea 1(%rcx,%s),%rcx
        }
        // jrcxz reaches 8 bits: to a local exit, the other exit right after it.
        const bool f_first = equal_holds;
        e_.bytes({0xe3, 0x00});   // jrcxz (rcx == 0: a == b)
        std::size_t short_at = e_.size() - 1;
        std::size_t over = 0;
        if (!f_first) {
            e_.bytes({0xeb, 0x00});   // jmp true (a != b holds)
            over = e_.size() - 1;
            e_.code()[short_at] = static_cast<std::byte>(e_.size() - short_at - 1);
        }
        false_exit(f);
        if (f_first) {
            e_.code()[short_at] = static_cast<std::byte>(e_.size() - short_at - 1);
        } else {
            e_.code()[over] = static_cast<std::byte>(e_.size() - over - 1);
        }
        true_exit();
        return true;
    }

    bool scratch(unsigned k) {
        if (k >= pool_.size()) {
            return false;
        }
        used_ = std::max(used_, k + 1);
        return k < scratch_;   // the first pass counts, the second has them saved
    }

    /// The site's %rsp is this far above the current one.
    std::int32_t rsp_offset() const { return static_cast<std::int32_t>(128 + 8 * pushed_); }

    /// `n` as an operand of a 64-bit instruction without a scratch register: a full
    /// register the code does not change, or a full memory slot at a fixed address.
    bool direct(const node& n, operand& o) const {
        if (n.kind == node_kind::reg && n.width == 64 && n.reg != 7 &&
            !(mode_ == mode::flags_in_ax && machine(n.reg) == rax)) {
            o = in_reg(machine(n.reg));
            return true;
        }
        return n.kind == node_kind::mem && n.width == 64 && memory(n, o);
    }

    /// The memory operand of a mem node, when it needs no register set up.
    bool memory(const node& n, operand& o) const {
        o = operand{};
        std::int64_t disp = static_cast<std::int64_t>(n.value);
        if (n.reg == absolute || n.reg == fs_base) {
            o.fs = n.reg == fs_base;
        } else if (n.reg == 7) {
            o.base = rsp;
            disp += rsp_offset();
        } else if (mode_ == mode::flags_in_ax && machine(n.reg) == rax) {
            return false;
        } else {
            o.base = machine(n.reg);
        }
        if (disp < INT32_MIN || disp > INT32_MAX) {
            return false;
        }
        o.disp = static_cast<std::int32_t>(disp);
        return true;
    }

    /// The site's %rax where the flags-in-%ax form saved it.
    operand saved_rax() const {
        operand o;
        o.base = rsp;
        o.disp = static_cast<std::int32_t>(8 * scratch_);
        return o;
    }

    /// `s` = the value of `n`, 64 bits wide.
    bool materialize(const node& n, int s) {
        switch (n.kind) {
        case node_kind::constant:
            if (fits32(n.value)) {
                insn({0xc7}, true, 0, in_reg(s));   // mov $imm32,%s
                e_.u32(static_cast<std::uint32_t>(n.value));
            } else {
                e_.bytes({0x48 | (s >= 8 ? 1 : 0), 0xb8 + (s & 7)});   // movabs $v,%s
                e_.u64(n.value);
            }
            return true;
        case node_kind::reg:
            if (n.reg == 7) {
                lea(s, rsp, rsp_offset());
                return n.width == 64 || load(s, in_reg(s), n.width, n.is_signed);
            }
            if (mode_ == mode::flags_in_ax && machine(n.reg) == rax) {
                return load(s, saved_rax(), n.width, n.is_signed);
            }
            return load(s, in_reg(machine(n.reg)), n.width, n.is_signed);
        case node_kind::address:
        case node_kind::mem: {
            node base = n;
            base.value = 0;
            operand o;
            if (!memory(n, o)) {
                // The base in a register first: the site's %rax, or an address past 32 bits.
                if (n.reg == fs_base) {
                    return false;
                }
                if (n.reg == absolute) {
                    base.kind = node_kind::constant;
                    base.value = n.value;
                } else {
                    base.kind = node_kind::reg;
                    base.width = 64;
                }
                if (!materialize(base, s)) {
                    return false;
                }
                std::uint64_t disp = n.reg == absolute ? 0 : n.value;
                if (!fits32(disp)) {
                    return false;
                }
                o = operand{};
                o.base = s;
                o.disp = static_cast<std::int32_t>(disp);
            }
            if (n.kind == node_kind::mem) {
                return load(s, o, n.width, n.is_signed);
            }
            if (o.fs) {   // the thread pointer plus disp
                e_.bytes({0x64, 0x48 | (s >= 8 ? 4 : 0), 0x8b, ((s & 7) << 3) | 4, 0x25, 0, 0, 0, 0});   // mov %fs:0,%s
                o.fs = false;
                o.base = s;
            }
            if (o.base == absolute) {
                return materialize(constant_node(static_cast<std::uint64_t>(static_cast<std::int64_t>(o.disp))), s);
            }
            lea(s, o.base, o.disp);
            return true;
        }
        default:
            return false;   // a truth value as an operand: the stack compiler's
        }
    }

    static node constant_node(std::uint64_t v) {
        node n;
        n.value = v;
        return n;
    }

    void lea(int s, int base, std::int32_t disp) {   // lea disp(%base),%s
        operand o;
        o.base = base;
        o.disp = disp;
        insn({0x8d}, true, s, o);
    }

    /// `s` = `width` bits of `o`, extended to 64.
    bool load(int s, const operand& o, unsigned width, bool is_signed) {
        switch (width) {
        case 64: insn({0x8b}, true, s, o); return true;                                      // mov
        case 32: is_signed ? insn({0x63}, true, s, o) : insn({0x8b}, false, s, o); return true;   // movslq / mov 32
        case 16: insn({0x0f, is_signed ? 0xbf : 0xb7}, true, s, o); return true;            // movswq / movzwq
        case 8: insn({0x0f, is_signed ? 0xbe : 0xb6}, true, s, o); return true;             // movsbq / movzbq
        default: return false;
        }
    }

    /// An instruction with a ModRM operand: [%fs] [REX] opcode ModRM [SIB] [disp32]; `r` the
    /// register (or /digit) field.
    void insn(std::initializer_list<int> opcode, bool w, int r, const operand& m) {
        if (m.fs) {
            e_.bytes({0x64});
        }
        int rm = m.is_reg ? m.reg : (m.base >= 0 ? m.base : 0);
        int rex = 0x40 | (w ? 8 : 0) | (r >= 8 ? 4 : 0) | (rm >= 8 ? 1 : 0);
        if (rex != 0x40 || (m.is_reg && rm >= 4 && rm < 8 && !w)) {
            e_.bytes({rex});
        }
        e_.bytes(opcode);
        if (m.is_reg) {
            e_.bytes({0xc0 | ((r & 7) << 3) | (rm & 7)});
            return;
        }
        if (m.base < 0) {
            e_.bytes({((r & 7) << 3) | 4, 0x25});   // [disp32], no base, no index
        } else {
            e_.bytes({0x80 | ((r & 7) << 3) | (m.base & 7)});
            if ((m.base & 7) == 4) {
                e_.bytes({0x24});                 // SIB: base %rsp/%r12, no index
            }
        }
        e_.u32(static_cast<std::uint32_t>(m.disp));
    }

    std::vector<node> nodes_;
    int root_;
    int zero_ = -1;
    mode mode_;
    bool flags_dead_;
    std::vector<int> pool_;
    unsigned scratch_;
    unsigned pushed_ = 0;
    unsigned used_ = 0;
    unsigned visits_ = 0;
    code_buffer e_;
    std::vector<std::optional<std::size_t>> labels_;
    std::vector<std::pair<std::size_t, int>> fixups_;
};

/// The machine registers the tree reads.
std::array<bool, 16> registers_read(const std::vector<node>& nodes) {
    std::array<bool, 16> read{};
    for (const auto& n : nodes) {
        if ((n.kind == node_kind::reg || n.kind == node_kind::address || n.kind == node_kind::mem) && n.reg >= 0) {
            read[static_cast<std::size_t>(machine(n.reg))] = true;
        }
    }
    return read;
}

}  // namespace
std::optional<native_filter> compile_direct_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                   bool flags_dead) {
    auto tree = parse_condition_tree(bytecode, site);
    const int root = tree.root;
    if (root < 0) {
        return std::nullopt;
    }
    const auto& nodes = tree.nodes;
    auto read = registers_read(nodes);
    // Without the flags when the root is an ==/!= (or a value's truth) and %rcx is free.
    int x = root;
    while (nodes[static_cast<std::size_t>(x)].kind == node_kind::lnot) {
        x = nodes[static_cast<std::size_t>(x)].a;
    }
    const node& top = nodes[static_cast<std::size_t>(x)];
    bool eq = (top.kind == node_kind::compare && (top.op == OMPDBG_OP_EQ || top.op == OMPDBG_OP_NE)) ||
              top.kind == node_kind::reg || top.kind == node_kind::mem || top.kind == node_kind::address;
    mode m = (eq && !read[rcx]) ? mode::no_flags : mode::flags_in_ax;
    std::vector<int> pool;
    for (int r : {1, 2, 6, 7, 8, 9, 10, 11}) {   // rcx rdx rsi rdi r8-r11
        if (!read[static_cast<std::size_t>(r)]) {
            pool.push_back(r);
        }
    }
    // Twice: the first pass counts the scratch registers, the second saves that many.
    generator count(nodes, root, m, flags_dead, pool, static_cast<unsigned>(pool.size()));
    if (!count.run()) {
        return std::nullopt;
    }
    return generator(nodes, root, m, flags_dead, pool, count.scratch_used()).run();
}

}  // namespace ompdbg::tracer::internal
