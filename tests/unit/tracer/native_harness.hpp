#pragma once
// What the native-condition tests share (native_filter_tests.cpp, native_direct_tests.cpp):
// a harness that runs a pad's native condition on chosen register values, random bytecode
// programs, and the comparison of a native run with the agent's own interpreter
// (agent/src/agent.c) on the same registers.

#include <catch2/catch.hpp>

#include "internal/native_filter.hpp"

#include "ompdbg/agent/agent_abi.h"

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include <sys/mman.h>

extern "C" ompdbg_agent_control ompdbg_agent_control;
extern "C" int ompdbg_agent_evaluate(ompdbg_agent_site* site, const std::uint64_t* regs);
extern "C" int ompdbg_agent_exec(const std::uint8_t* code, std::uint32_t len, const std::uint64_t* regs,
                                 std::uint64_t* value);

using ompdbg::tracer::internal::compile_native_filter;
using ompdbg::tracer::internal::compile_stack_filter;

namespace {

constexpr std::uint64_t fake_site = 0x401000;
constexpr std::uint64_t flag_bits = 0x8d5;   // CF PF AF ZF SF OF

/// What a run of the native code gave back.
struct outcome {
    int full = -1;                 ///< 1: went on to the full path, 0: to the relocated code
    std::array<std::uint64_t, 16> regs{};
    std::uint64_t flags = 0;
    std::uint64_t rsp = 0;         ///< at the exit
};

/// The in/out memory of the harness (the page's data part).
struct harness_data {
    std::uint64_t host_rsp;
    std::uint64_t in[18];          ///< DWARF order 0-15, [16] unused, [17] rflags
    std::uint64_t out[16];
    std::uint64_t out_flags;
    std::uint64_t out_rsp;
    std::uint64_t site_rsp;
};

/// Runs native filters on chosen register values: entry(data) loads every register, runs
/// the filter where the pad would, and stores the registers at either exit.
class harness {
public:
    harness() {
        mem_ = static_cast<std::byte*>(
            mmap(nullptr, size_, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        REQUIRE(mem_ != MAP_FAILED);
    }
    ~harness() { munmap(mem_, size_); }
    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;

    /// Runs `bytecode` compiled by compile_native_filter (with `count`, at a site whose flags
    /// are dead or not), or by the stack compiler alone (`stack`).
    outcome run(const std::vector<std::uint8_t>& bytecode, const std::array<std::uint64_t, 18>& in,
                std::optional<ompdbg::tracer::internal::native_count> count = std::nullopt, bool flags_dead = false,
                bool stack = false) {
        auto filter = stack ? compile_stack_filter(bytecode, fake_site, count)
                            : compile_native_filter(bytecode, fake_site, count, flags_dead);
        REQUIRE(filter);
        direct_ = filter->direct;
        auto* data = reinterpret_cast<harness_data*>(mem_);
        std::memset(data, 0, sizeof *data);
        std::memcpy(data->in, in.data(), sizeof data->in);
        code_.clear();
        const std::size_t base = 512;   // the code after the data
        bytes({0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57});   // push rbx rbp r12-r15
        rip_op({0x48, 0x89, 0x25}, base, offsetof(harness_data, host_rsp));   // mov %rsp,host_rsp(%rip)
        rip_op({0x48, 0x89, 0x25}, base, offsetof(harness_data, site_rsp));   // mov %rsp,site_rsp(%rip)
        bytes({0xff, 0xb7});                                                   // push in[17](%rdi)
        u32(static_cast<std::uint32_t>(offsetof(harness_data, in) + 17 * 8));
        bytes({0x9d});                                                         // popfq
        for (int r = 0; r < 16; ++r) {
            if (r == 5 || r == 7) {
                continue;   // rdi last, rsp is the site's
            }
            load_from_rdi(r, static_cast<std::int32_t>(offsetof(harness_data, in) + 8 * r));
        }
        load_from_rdi(5, static_cast<std::int32_t>(offsetof(harness_data, in) + 8 * 5));
        bytes({0x48, 0x8d, 0x64, 0x24, 0x80});   // lea -128(%rsp),%rsp: the pad's first instruction
        std::size_t filter_at = code_.size();
        for (auto b : filter->code) {
            code_.push_back(static_cast<std::uint8_t>(b));
        }
        // Fell through: the full path (rsp still 128 below the site's).
        store_all(base);
        bytes({0xb8, 1, 0, 0, 0});               // mov $1,%eax
        std::size_t to_common = code_.size();
        bytes({0xe9, 0, 0, 0, 0});               // jmp common
        std::size_t relocated = code_.size();
        store_all(base);
        bytes({0xb8, 0, 0, 0, 0});               // mov $0,%eax
        std::size_t common = code_.size();
        patch(to_common + 1, common);
        patch(filter_at + filter->to_relocated, relocated);
        rip_op({0x48, 0x8b, 0x25}, base, offsetof(harness_data, host_rsp));   // mov host_rsp(%rip),%rsp
        bytes({0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b, 0xc3});   // pop r15-r12 rbp rbx; ret
        REQUIRE(base + code_.size() <= size_);
        std::memcpy(mem_ + base, code_.data(), code_.size());
        __builtin___clear_cache(reinterpret_cast<char*>(mem_ + base), reinterpret_cast<char*>(mem_ + base + code_.size()));
        auto entry = reinterpret_cast<int (*)(harness_data*)>(mem_ + base);
        outcome o;
        o.full = entry(data);
        std::memcpy(o.regs.data(), data->out, sizeof data->out);
        o.flags = data->out_flags;
        o.rsp = data->out_rsp;
        site_rsp_ = data->site_rsp;
        return o;
    }
    std::uint64_t site_rsp() const { return site_rsp_; }
    /// Whether the last run's code was the direct form.
    bool direct() const { return direct_; }

private:
    void bytes(std::initializer_list<int> b) {
        for (int x : b) {
            code_.push_back(static_cast<std::uint8_t>(x));
        }
    }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            code_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
        }
    }
    /// The disp32 from the end of a rip-relative instruction (4 more bytes from here) to
    /// `field` of the data.
    std::int32_t rel(std::size_t base, std::size_t field) const {
        return static_cast<std::int32_t>(static_cast<std::int64_t>(field) -
                                         static_cast<std::int64_t>(base + code_.size() + 4));
    }
    /// An instruction ending in a rip-relative disp32 to `field` of the data.
    void rip_op(std::initializer_list<int> opcode, std::size_t base, std::size_t field) {
        bytes(opcode);
        u32(static_cast<std::uint32_t>(rel(base, field)));
    }
    void load_from_rdi(int dwarf, std::int32_t disp) {
        int reg = machine(dwarf);
        bytes({0x48 | (reg >= 8 ? 4 : 0), 0x8b, 0x80 | ((reg & 7) << 3) | 7});   // mov disp(%rdi),reg
        u32(static_cast<std::uint32_t>(disp));
    }
    /// Stores every register (and the flags, and rsp) into the data, rip-relative.
    void store_all(std::size_t base) {
        for (int r = 0; r < 16; ++r) {
            if (r == 7) {
                continue;
            }
            int reg = machine(r);
            bytes({0x48 | (reg >= 8 ? 4 : 0), 0x89, ((reg & 7) << 3) | 5});   // mov reg,out[r](%rip)
            u32(static_cast<std::uint32_t>(rel(base, offsetof(harness_data, out) + 8 * r)));
        }
        bytes({0x48, 0x89, 0x25});   // mov %rsp,out_rsp(%rip)
        u32(static_cast<std::uint32_t>(rel(base, offsetof(harness_data, out_rsp))));
        bytes({0x9c, 0x58});         // pushfq; pop %rax
        bytes({0x48, 0x89, 0x05});   // mov %rax,out_flags(%rip)
        u32(static_cast<std::uint32_t>(rel(base, offsetof(harness_data, out_flags))));
    }
    /// DWARF number → machine register number.
    static int machine(int dwarf) {
        static constexpr int map[16] = {0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15};
        return map[dwarf];
    }
    void patch(std::size_t at, std::size_t target) {
        auto v = static_cast<std::int32_t>(static_cast<std::int64_t>(target) - static_cast<std::int64_t>(at + 4));
        std::memcpy(code_.data() + at, &v, 4);
    }

    static constexpr std::size_t size_ = 8192;
    std::byte* mem_ = nullptr;
    std::vector<std::uint8_t> code_;
    std::uint64_t site_rsp_ = 0;
    bool direct_ = false;
};

}  // namespace

namespace {

std::uint64_t loadable[4] = {0x8000000000000001ull, 0xfffffffffffffffeull, 0x00000000ffffff80ull, 42};

/// A program of the agent's bytecode, written as agent_expr.cpp writes them.
struct program {
    std::vector<std::uint8_t> code;
    void op(std::uint8_t o) { code.push_back(o); }
    void u8(unsigned v) { code.push_back(static_cast<std::uint8_t>(v)); }
    void constant(std::uint64_t v) {
        op(OMPDBG_OP_CONST);
        for (int i = 0; i < 8; ++i) {
            code.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
        }
    }
    std::size_t jump(std::uint8_t o) {
        op(o);
        code.push_back(0);
        code.push_back(0);
        return code.size() - 2;
    }
    void land(std::size_t at) {
        code[at] = static_cast<std::uint8_t>(code.size());
        code[at + 1] = static_cast<std::uint8_t>(code.size() >> 8);
    }
};

/// Random expressions over registers, constants at the edges of the types, loads of
/// globals and every operation, nested up to `depth`.
class generator {
public:
    explicit generator(std::uint32_t seed) : rng_(seed) {}

    void expression(program& p, int depth) {
        int pick = depth <= 0 ? static_cast<int>(rng_() % 3) : static_cast<int>(rng_() % 12);
        switch (pick) {
        case 0: p.constant(edge()); return;
        case 1: {
            static constexpr unsigned regs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
            p.op(OMPDBG_OP_REG);
            p.u8(regs[rng_() % 17]);
            return;
        }
        case 2: {
            static constexpr unsigned sizes[] = {1, 2, 4, 8};
            p.constant(reinterpret_cast<std::uint64_t>(&loadable[rng_() % 4]));
            p.op(OMPDBG_OP_LOAD_FRAME);
            p.u8(sizes[rng_() % 4]);
            return;
        }
        case 3: {
            static constexpr std::uint8_t unary[] = {OMPDBG_OP_NEG, OMPDBG_OP_NOT, OMPDBG_OP_LNOT};
            expression(p, depth - 1);
            p.op(unary[rng_() % 3]);
            return;
        }
        case 4: {
            static constexpr unsigned bits[] = {0, 1, 8, 16, 31, 32, 63, 64, 200};
            expression(p, depth - 1);
            p.op(rng_() % 2 ? OMPDBG_OP_SEXT : OMPDBG_OP_ZEXT);
            p.u8(bits[rng_() % 9]);
            return;
        }
        case 5: {   // a && b, as agent_expr.cpp writes it
            expression(p, depth - 1);
            auto to_false = p.jump(OMPDBG_OP_JZ);
            expression(p, depth - 1);
            p.op(OMPDBG_OP_LNOT);
            p.op(OMPDBG_OP_LNOT);
            auto to_end = p.jump(OMPDBG_OP_JMP);
            p.land(to_false);
            p.constant(0);
            p.land(to_end);
            return;
        }
        case 6: {   // a b SWAP op, a DUP op, a b POP
            expression(p, depth - 1);
            int form = static_cast<int>(rng_() % 3);
            if (form == 0) {
                expression(p, depth - 1);
                p.op(OMPDBG_OP_SWAP);
                p.op(OMPDBG_OP_SUB);
            } else if (form == 1) {
                p.op(OMPDBG_OP_DUP);
                p.op(OMPDBG_OP_MUL);
            } else {
                expression(p, depth - 1);
                p.op(OMPDBG_OP_POP);
            }
            return;
        }
        case 7:
            p.op(OMPDBG_OP_TP);
            return;
        default: {
            static constexpr std::uint8_t binary[] = {
                OMPDBG_OP_ADD,   OMPDBG_OP_SUB,   OMPDBG_OP_MUL,   OMPDBG_OP_DIV_S, OMPDBG_OP_DIV_U, OMPDBG_OP_REM_S,
                OMPDBG_OP_REM_U, OMPDBG_OP_AND,   OMPDBG_OP_OR,    OMPDBG_OP_XOR,   OMPDBG_OP_SHL,   OMPDBG_OP_SHR_S,
                OMPDBG_OP_SHR_U, OMPDBG_OP_EQ,    OMPDBG_OP_NE,    OMPDBG_OP_LT_S,  OMPDBG_OP_LT_U,  OMPDBG_OP_LE_S,
                OMPDBG_OP_LE_U};
            expression(p, depth - 1);
            expression(p, depth - 1);
            p.op(binary[rng_() % std::size(binary)]);
            return;
        }
        }
    }

    /// Register values: small, negative, at the edges, random.
    std::uint64_t edge() {
        static constexpr std::uint64_t edges[] = {0,  1, 2, 3, 63, 64, 0xff, 0x80, 0x7fffffff, 0x80000000, 0xffffffff,
                                                  0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, ~1ull};
        return rng_() % 3 == 0 ? rng_() | (static_cast<std::uint64_t>(rng_()) << 32) : edges[rng_() % std::size(edges)];
    }
    std::uint32_t next() { return rng_(); }

private:
    std::mt19937 rng_;
};

/// Runs `code` natively and through the interpreter on `regs`; checks they agree and that
/// the native code gave every register, rsp and the flags back (with `flags_dead`, the
/// flags only where it goes on to the full path). When compile_native_filter chose the
/// direct form, the stack compiler's code is checked too. Returns whether it was direct.
bool compare(harness& h, const std::vector<std::uint8_t>& code, std::array<std::uint64_t, 18> regs,
             bool flags_dead = false) {
    std::array<std::uint64_t, 18> in = regs;
    auto o = h.run(code, in, std::nullopt, flags_dead);
    const bool direct = h.direct();
    regs[7] = h.site_rsp();
    regs[16] = fake_site;
    std::uint64_t value = 0;
    int rc = ompdbg_agent_exec(code.data(), static_cast<std::uint32_t>(code.size()), regs.data(), &value);
    INFO("interpreter rc " << rc << " value " << value);
    auto check = [&](const outcome& o) {
        CHECK(o.full == (rc != 0 || value != 0 ? 1 : 0));
        for (int r = 0; r < 16; ++r) {
            if (r != 7) {
                INFO("register " << r);
                CHECK(o.regs[static_cast<std::size_t>(r)] == regs[static_cast<std::size_t>(r)]);
            }
        }
        if (!flags_dead || o.full == 1) {
            CHECK((o.flags & flag_bits) == (regs[17] & flag_bits));
        }
        CHECK(o.rsp == (o.full ? h.site_rsp() - 128 : h.site_rsp()));
    };
    {
        INFO("direct " << direct << ", flags dead " << flags_dead);
        check(o);
    }
    if (direct && code.size() <= OMPDBG_AGENT_SITE_CODE_BYTES && compile_stack_filter(code, fake_site)) {
        INFO("the stack compiler's code");
        check(h.run(code, in, std::nullopt, false, true));
    }
    return direct;
}

std::array<std::uint64_t, 18> registers(generator& g) {
    std::array<std::uint64_t, 18> regs{};
    for (std::size_t r = 0; r < 16; ++r) {
        regs[r] = g.edge();
    }
    regs[17] = 0x202 | (g.next() & flag_bits);
    return regs;
}

}  // namespace
