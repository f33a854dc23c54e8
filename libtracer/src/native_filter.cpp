// A condition's bytecode compiled to x86-64 for the pad (internal/native_filter.hpp). The
// bytecode's stack is the machine stack: each operation pops its operands into %rax/%rcx
// and pushes its result, so that the depth, and with it where the saved registers are, is
// known at every instruction. Encodings are spelled out with their mnemonic.

#include "internal/native_filter.hpp"
#include "internal/code_buffer.hpp"
#include "internal/native_direct.hpp"

#include "ompdbg/agent/agent_abi.h"

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <map>

#include <cpuid.h>

namespace ompdbg::tracer::internal {

namespace {

// What the prologue pushes below the red zone: %rax, the flags (lahf/seto in %ax), %rcx,
// %rdx. With k words on the bytecode's stack, %rdx is at 8k(%rsp), %rcx at 8k+8, %rax at
// 8k+24 and the site's %rsp is 8k+160.
constexpr std::int32_t rdx_slot = 0, rcx_slot = 8, rax_slot = 24, site_rsp = 128 + 32;

class emitter : public code_buffer {
public:
    void imm32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void imm64(std::uint64_t v) { u64(v); }
    std::size_t rel32(std::initializer_list<int> opcode) { return disp32(opcode); }
    void push_slot(std::int32_t disp) {   // push disp(%rsp): the address is taken before the push
        bytes({0xff, 0xb4, 0x24});
        imm32(disp);
    }
};

class compiler {
public:
    compiler(std::span<const std::uint8_t> code, std::uint64_t site, std::optional<native_count> count)
        : code_(code), site_(site), count_(count) {}

    std::optional<native_filter> run() {
        e_.save_flags_in_ax();
        e_.bytes({0x50, 0x51, 0x52});   // push %rax (flags); push %rcx; push %rdx
        std::optional<unsigned> k = 0;   // words on the bytecode's stack; nullopt: unreachable
        std::uint32_t pc = 0;
        const auto len = static_cast<std::uint32_t>(code_.size());
        if (len == 0) {
            true_fixups_.push_back(e_.rel32({0xe9}));   // no condition: it holds
            k.reset();
        }
        while (pc < len) {
            if (!join(pc, k)) {
                return std::nullopt;
            }
            native_at_[pc] = e_.size();
            std::uint32_t at = pc;
            std::uint8_t op = code_[pc++];
            if (!operation(op, at, pc, k)) {
                return std::nullopt;
            }
        }
        // Off the end (or a jump to it): the interpreter answers "undecided".
        if (!join(len, k)) {
            return std::nullopt;
        }
        native_at_[len] = e_.size();
        if (k) {
            undecided(*k);
        }
        for (auto& [rel, target] : pc_fixups_) {
            auto it = native_at_.find(target);
            if (it == native_at_.end()) {
                return std::nullopt;   // a jump into an operand
            }
            e_.resolve(rel, it->second);
        }
        native_filter f;
        for (auto rel : true_fixups_) {
            e_.resolve(rel, e_.size());
        }
        if (count_) {
            count();
        } else {
            full_fixups_.push_back(e_.rel32({0xe9}));
        }
        // False (or counted): the registers and flags back, the red zone given back, on to the
        // relocated instructions.
        for (auto rel : false_fixups_) {
            e_.resolve(rel, e_.size());
        }
        restore();
        e_.lea_rsp(128);
        f.to_relocated = e_.rel32({0xe9});   // jmp relocated
        // True or undecided: the same, then the pad's full path (next byte).
        for (auto rel : full_fixups_) {
            e_.resolve(rel, e_.size());
        }
        restore();
        f.code = std::move(e_.code());
        return f;
    }

private:
    /// The depth at an instruction that jumps reach: theirs, which must agree with the
    /// fall-through's.
    bool join(std::uint32_t pc, std::optional<unsigned>& k) {
        auto it = depth_at_.find(pc);
        if (it == depth_at_.end()) {
            return true;
        }
        if (k && *k != it->second) {
            return false;
        }
        k = it->second;
        return true;
    }

    void restore() {
        e_.bytes({0x5a, 0x59, 0x58});   // pop %rdx; pop %rcx; pop %rax (flags)
        e_.restore_flags_from_ax();
        e_.bytes({0x58});               // pop %rax
    }

    /// The condition held: count the hit as the agent's count_passed does when nothing
    /// else is to be done (agent_abi.h), else on to the full path. %rax, %rcx and %rdx are
    /// free, the flags saved.
    void count() {
        const auto& c = *count_;
        auto field = [](std::size_t offset) { return static_cast<std::int32_t>(offset); };
        auto full_unless = [&](int cc) { full_fixups_.push_back(e_.rel32({0x0f, cc ^ 1})); };
        e_.bytes({0x48, 0xb8});                        // movabs $control,%rax
        e_.imm64(c.control);
        e_.bytes({0x83, 0xb8});                        // cmpl $0,forked(%rax)
        e_.imm32(field(offsetof(ompdbg_agent_control, forked)));
        e_.bytes({0x00});
        full_unless(0x84);                             // a fork child: the agent answers
        e_.bytes({0x48, 0x8b, 0x88});                  // mov shard_tls(%rax),%rcx
        e_.imm32(field(offsetof(ompdbg_agent_control, shard_tls)));
        e_.bytes({0x48, 0x85, 0xc9});                  // test %rcx,%rcx
        full_unless(0x85);                             // the agent has not started yet
        e_.bytes({0x64, 0x8b, 0x09});                  // mov %fs:(%rcx),%ecx: shard + 1
        e_.bytes({0x83, 0xf9, 0x01});                  // cmp $1,%ecx
        full_unless(0x87);                             // ja: a shard of its own
        const std::uint64_t record = offsetof(ompdbg_agent_control, sites) + c.index * sizeof(ompdbg_agent_site);
        e_.bytes({0x83, 0xb8});                        // cmpl $0,enabled(%rax)
        e_.imm32(field(record + offsetof(ompdbg_agent_site, enabled)));
        e_.bytes({0x00});
        full_unless(0x85);
        e_.bytes({0x83, 0xb8});                        // cmpl $COUNT,action(%rax)
        e_.imm32(field(record + offsetof(ompdbg_agent_site, action)));
        e_.bytes({OMPDBG_ACTION_COUNT});
        full_unless(0x84);
        e_.bytes({0x48, 0x83, 0xb8});                  // cmpq $0,ignore(%rax)
        e_.imm32(field(record + offsetof(ompdbg_agent_site, ignore)));
        e_.bytes({0x00});
        full_unless(0x84);                             // hits to ignore: the agent takes them
        e_.bytes({0x48, 0x69, 0xc9});                  // imul $shard size,%rcx,%rcx
        e_.imm32(field(sizeof(ompdbg_agent_shard)));
        // shard[s].passed[index] with s = %ecx - 1: the thread's own, a plain add.
        e_.bytes({0x48, 0x83, 0x84, 0x08});            // addq $1,disp(%rax,%rcx)
        e_.imm32(field(offsetof(ompdbg_agent_control, shard) - sizeof(ompdbg_agent_shard) +
                       c.index * sizeof(std::uint64_t)));
        e_.bytes({0x01});
        false_fixups_.push_back(e_.rel32({0xe9}));     // on, as after a false condition
    }

    /// Drops the k words of the bytecode's stack and goes to the full path.
    void undecided(unsigned k) {
        if (k != 0) {
            e_.lea_rsp(static_cast<std::int32_t>(8 * k));
        }
        full_fixups_.push_back(e_.rel32({0xe9}));
    }

    /// Undecided unless the condition code `cc` (the second byte of a jcc rel32) holds.
    void undecided_unless(int cc, unsigned k) {
        std::size_t over = e_.rel32({0x0f, cc});
        undecided(k);
        e_.resolve(over, e_.size());
    }

    bool operation(std::uint8_t op, std::uint32_t at, std::uint32_t& pc, std::optional<unsigned>& k) {
        const auto len = static_cast<std::uint32_t>(code_.size());
        auto args = [&](std::uint32_t n) { return pc + n <= len; };
        if (!k) {
            // Unreachable (after a jump or an end, no jump here): only its length matters.
            std::uint32_t n = op == OMPDBG_OP_CONST ? 8
                              : (op == OMPDBG_OP_JZ || op == OMPDBG_OP_JMP) ? 2
                              : (op == OMPDBG_OP_REG || op == OMPDBG_OP_LOAD || op == OMPDBG_OP_LOAD_FRAME ||
                                 op == OMPDBG_OP_SEXT || op == OMPDBG_OP_ZEXT)
                                  ? 1
                                  : 0;
            if (!args(n)) {
                return false;
            }
            pc += n;
            return true;
        }
        unsigned& d = *k;
        auto need = [&](unsigned n) { return d >= n; };
        auto room = [&] { return d < OMPDBG_AGENT_STACK_DEPTH; };
        switch (op) {
        case OMPDBG_OP_END:
            if (!need(1)) {
                return false;
            }
            e_.bytes({0x48, 0x8b, 0x04, 0x24});   // mov (%rsp),%rax
            e_.lea_rsp(static_cast<std::int32_t>(8 * d));
            e_.bytes({0x48, 0x85, 0xc0});         // test %rax,%rax
            false_fixups_.push_back(e_.rel32({0x0f, 0x84}));   // jz false
            true_fixups_.push_back(e_.rel32({0xe9}));          // jmp true
            k.reset();
            return true;
        case OMPDBG_OP_CONST: {
            if (!args(8) || !room()) {
                return false;
            }
            std::uint64_t v;
            std::memcpy(&v, code_.data() + pc, 8);
            pc += 8;
            push_constant(v);
            ++d;
            return true;
        }
        case OMPDBG_OP_REG:
            if (!args(1) || !room() || !push_register(code_[pc], d)) {
                return false;
            }
            pc += 1;
            ++d;
            return true;
        case OMPDBG_OP_LOAD_FRAME: {
            if (!args(1) || !need(1)) {
                return false;
            }
            unsigned size = code_[pc++];
            e_.bytes({0x58});   // pop %rax
            switch (size) {
            case 1: e_.bytes({0x0f, 0xb6, 0x00}); break;   // movzbl (%rax),%eax
            case 2: e_.bytes({0x0f, 0xb7, 0x00}); break;   // movzwl (%rax),%eax
            case 4: e_.bytes({0x8b, 0x00}); break;         // mov (%rax),%eax
            case 8: e_.bytes({0x48, 0x8b, 0x00}); break;   // mov (%rax),%rax
            default: return false;
            }
            e_.bytes({0x50});   // push %rax
            return true;
        }
        case OMPDBG_OP_TP:
            if (!room()) {
                return false;
            }
            e_.bytes({0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0});   // mov %fs:0,%rax
            e_.bytes({0x50});
            ++d;
            return true;
        case OMPDBG_OP_SEXT:
        case OMPDBG_OP_ZEXT: {
            if (!args(1) || !need(1)) {
                return false;
            }
            unsigned bits = code_[pc++];
            if (bits != 0 && bits < 64) {
                int s = static_cast<int>(64 - bits);
                e_.bytes({0x58});                        // pop %rax
                e_.bytes({0x48, 0xc1, 0xe0, s});         // shl $s,%rax
                if (op == OMPDBG_OP_SEXT) {
                    e_.bytes({0x48, 0xc1, 0xf8, s});     // sar $s,%rax
                } else {
                    e_.bytes({0x48, 0xc1, 0xe8, s});     // shr $s,%rax
                }
                e_.bytes({0x50});
            }
            return true;
        }
        case OMPDBG_OP_NEG:
        case OMPDBG_OP_NOT:
            if (!need(1)) {
                return false;
            }
            // negq (%rsp) / notq (%rsp)
            e_.bytes({0x48, 0xf7, op == OMPDBG_OP_NEG ? 0x1c : 0x14, 0x24});
            return true;
        case OMPDBG_OP_LNOT:
            if (!need(1)) {
                return false;
            }
            e_.bytes({0x58, 0x48, 0x85, 0xc0});   // pop %rax; test %rax,%rax
            e_.bytes({0x0f, 0x94, 0xc0});         // sete %al
            e_.bytes({0x0f, 0xb6, 0xc0, 0x50});   // movzbl %al,%eax; push %rax
            return true;
        case OMPDBG_OP_DUP:
            if (!need(1) || !room()) {
                return false;
            }
            e_.bytes({0xff, 0x34, 0x24});   // push (%rsp)
            ++d;
            return true;
        case OMPDBG_OP_POP:
            if (!need(1)) {
                return false;
            }
            e_.lea_rsp(8);
            --d;
            return true;
        case OMPDBG_OP_SWAP:
            if (!need(2)) {
                return false;
            }
            e_.bytes({0x58, 0x59, 0x50, 0x51});   // pop %rax; pop %rcx; push %rax; push %rcx
            return true;
        case OMPDBG_OP_JMP:
        case OMPDBG_OP_JZ: {
            if (!args(2) || (op == OMPDBG_OP_JZ && !need(1))) {
                return false;
            }
            std::uint32_t target = code_[pc] | (static_cast<std::uint32_t>(code_[pc + 1]) << 8);
            pc += 2;
            if (target <= at || target > len) {
                return false;   // backward (the interpreter's step limit decides loops) or out
            }
            if (op == OMPDBG_OP_JZ) {
                e_.bytes({0x58, 0x48, 0x85, 0xc0});   // pop %rax; test %rax,%rax
                --d;
                pc_fixups_.emplace_back(e_.rel32({0x0f, 0x84}), target);   // jz
            } else {
                pc_fixups_.emplace_back(e_.rel32({0xe9}), target);          // jmp
            }
            auto [it, fresh] = depth_at_.emplace(target, d);
            if (!fresh && it->second != d) {
                return false;
            }
            if (op == OMPDBG_OP_JMP) {
                k.reset();
            }
            return true;
        }
        default:
            return binary(op, d);
        }
    }

    void push_constant(std::uint64_t v) {
        auto s = static_cast<std::int64_t>(v);
        if (s >= INT32_MIN && s <= INT32_MAX) {
            e_.bytes({0x68});   // push $imm32 (sign-extended)
            e_.imm32(static_cast<std::int32_t>(s));
        } else {
            e_.bytes({0x48, 0xb8});   // movabs $v,%rax
            e_.imm64(v);
            e_.bytes({0x50});
        }
    }

    /// Pushes DWARF register `r`'s value at the site, with `d` words on the stack.
    bool push_register(unsigned r, unsigned d) {
        auto depth = static_cast<std::int32_t>(8 * d);
        switch (r) {
        case 0: e_.push_slot(rax_slot + depth); return true;
        case 1: e_.push_slot(rdx_slot + depth); return true;
        case 2: e_.push_slot(rcx_slot + depth); return true;
        case 3: e_.bytes({0x53}); return true;   // push %rbx
        case 4: e_.bytes({0x56}); return true;   // push %rsi
        case 5: e_.bytes({0x57}); return true;   // push %rdi
        case 6: e_.bytes({0x55}); return true;   // push %rbp
        case 7:
            e_.bytes({0x48, 0x8d, 0x84, 0x24});  // lea site_rsp(%rsp),%rax
            e_.imm32(site_rsp + depth);
            e_.bytes({0x50});
            return true;
        case 16: push_constant(site_); return true;
        default:
            if (r >= 8 && r <= 15) {
                e_.bytes({0x41, static_cast<int>(0x50 + r - 8)});   // push %r8 .. %r15
                return true;
            }
            return false;   // the flags (17) are saved in another form; others do not exist
        }
    }

    /// Two operands: a (below) in %rax, b (top) in %rcx; the result pushed.
    bool binary(std::uint8_t op, unsigned& d) {
        if (d < 2) {
            return false;
        }
        auto set = [&](int cc) {
            e_.bytes({0x48, 0x39, 0xc8});          // cmp %rcx,%rax
            e_.bytes({0x0f, cc, 0xc0});            // setCC %al
            e_.bytes({0x0f, 0xb6, 0xc0});          // movzbl %al,%eax
        };
        e_.bytes({0x59, 0x58});   // pop %rcx (b); pop %rax (a)
        d -= 2;
        switch (op) {
        case OMPDBG_OP_ADD: e_.bytes({0x48, 0x01, 0xc8}); break;          // add %rcx,%rax
        case OMPDBG_OP_SUB: e_.bytes({0x48, 0x29, 0xc8}); break;          // sub %rcx,%rax
        case OMPDBG_OP_MUL: e_.bytes({0x48, 0x0f, 0xaf, 0xc1}); break;    // imul %rcx,%rax
        case OMPDBG_OP_AND: e_.bytes({0x48, 0x21, 0xc8}); break;
        case OMPDBG_OP_OR: e_.bytes({0x48, 0x09, 0xc8}); break;
        case OMPDBG_OP_XOR: e_.bytes({0x48, 0x31, 0xc8}); break;
        case OMPDBG_OP_DIV_U:
        case OMPDBG_OP_REM_U:
            e_.bytes({0x48, 0x85, 0xc9});          // test %rcx,%rcx
            undecided_unless(0x85, d);             // division by zero: undecided
            e_.bytes({0x31, 0xd2});                // xor %edx,%edx
            e_.bytes({0x48, 0xf7, 0xf1});          // div %rcx
            if (op == OMPDBG_OP_REM_U) {
                e_.bytes({0x48, 0x89, 0xd0});      // mov %rdx,%rax
            }
            break;
        case OMPDBG_OP_DIV_S:
        case OMPDBG_OP_REM_S: {
            e_.bytes({0x48, 0x85, 0xc9});
            undecided_unless(0x85, d);
            // INT64_MIN / -1 overflows (the interpreter: undecided).
            e_.bytes({0x48, 0x83, 0xf9, 0xff});    // cmp $-1,%rcx
            std::size_t ok = e_.rel32({0x0f, 0x85});   // jne ok
            e_.bytes({0x48, 0xba});                // movabs $INT64_MIN,%rdx
            e_.imm64(0x8000000000000000ull);
            e_.bytes({0x48, 0x39, 0xd0});          // cmp %rdx,%rax
            undecided_unless(0x85, d);
            e_.resolve(ok, e_.size());
            e_.bytes({0x48, 0x99});                // cqo
            e_.bytes({0x48, 0xf7, 0xf9});          // idiv %rcx
            if (op == OMPDBG_OP_REM_S) {
                e_.bytes({0x48, 0x89, 0xd0});      // mov %rdx,%rax
            }
            break;
        }
        case OMPDBG_OP_SHL:
        case OMPDBG_OP_SHR_S:
        case OMPDBG_OP_SHR_U:
            e_.bytes({0x48, 0x83, 0xf9, 0x3f});    // cmp $63,%rcx
            undecided_unless(0x86, d);             // jbe: a shift of 64 or more is undecided
            e_.bytes({0x48, 0xd3, op == OMPDBG_OP_SHL ? 0xe0 : op == OMPDBG_OP_SHR_S ? 0xf8 : 0xe8});
            break;
        case OMPDBG_OP_EQ: set(0x94); break;
        case OMPDBG_OP_NE: set(0x95); break;
        case OMPDBG_OP_LT_S: set(0x9c); break;
        case OMPDBG_OP_LT_U: set(0x92); break;
        case OMPDBG_OP_LE_S: set(0x9e); break;
        case OMPDBG_OP_LE_U: set(0x96); break;
        default:
            return false;   // LOAD (process_vm_readv), unknown opcodes: the interpreter's
        }
        e_.bytes({0x50});   // push %rax
        ++d;
        return true;
    }

    std::span<const std::uint8_t> code_;
    std::uint64_t site_;
    std::optional<native_count> count_;
    emitter e_;
    std::map<std::uint32_t, unsigned> depth_at_;        ///< jump target → depth there
    std::map<std::uint32_t, std::size_t> native_at_;    ///< bytecode offset → code offset
    std::vector<std::pair<std::size_t, std::uint32_t>> pc_fixups_;
    std::vector<std::size_t> false_fixups_, true_fixups_, full_fixups_;
};

}  // namespace

namespace {

/// Whether this CPU has lahf/sahf in 64-bit mode (CPUID 0x80000001, ECX bit 0: every x86-64
/// CPU since 2006; the first ones lacked it). The pads run on this machine's CPUs: ompdbg
/// traces local processes only (a remote process has no pads).
bool has_lahf() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & 1u) != 0;
}

}  // namespace

std::optional<native_filter> compile_stack_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                  std::optional<native_count> count) {
    static const bool lahf = has_lahf();
    if (!lahf || (bytecode.empty() && !count) || bytecode.size() > OMPDBG_AGENT_SITE_CODE_BYTES ||
        (count && count->index >= OMPDBG_AGENT_MAX_SITES)) {
        return std::nullopt;
    }
    return compiler(bytecode, site, count).run();
}

std::optional<native_filter> compile_native_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                   std::optional<native_count> count, bool flags_dead) {
    static const bool lahf = has_lahf();
    // Comparisons joined by &&, || and !: compare and branch, no stack. A counter's pad
    // counts on the stack compiler's path.
    if (lahf && !count && !bytecode.empty() && bytecode.size() <= OMPDBG_AGENT_SITE_CODE_BYTES) {
        if (auto direct = compile_direct_filter(bytecode, site, flags_dead)) {
            return direct;
        }
    }
    return compile_stack_filter(bytecode, site, count);
}

}  // namespace ompdbg::tracer::internal
