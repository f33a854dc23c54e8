// Conditions compiled to native code for the pads (native_filter.cpp), run here on real
// registers and compared with the agent's own interpreter (agent/src/agent.c) on the same
// register values: the native code must answer "false" exactly where the interpreter
// answers false, go to the full path everywhere else (true, or undecided: a division by
// zero, a shift of 64), and give back every register and the arithmetic flags as they were.

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

    outcome run(const std::vector<std::uint8_t>& bytecode, const std::array<std::uint64_t, 18>& in,
                std::optional<ompdbg::tracer::internal::native_count> count = std::nullopt) {
        auto filter = compile_native_filter(bytecode, fake_site, count);
        REQUIRE(filter);
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
/// the native code gave every register, the flags and rsp back.
void compare(harness& h, const std::vector<std::uint8_t>& code, std::array<std::uint64_t, 18> regs) {
    auto o = h.run(code, regs);
    regs[7] = h.site_rsp();
    regs[16] = fake_site;
    std::uint64_t value = 0;
    int rc = ompdbg_agent_exec(code.data(), static_cast<std::uint32_t>(code.size()), regs.data(), &value);
    INFO("interpreter rc " << rc << " value " << value);
    CHECK(o.full == (rc != 0 || value != 0 ? 1 : 0));
    for (int r = 0; r < 16; ++r) {
        if (r != 7) {
            INFO("register " << r);
            CHECK(o.regs[static_cast<std::size_t>(r)] == regs[static_cast<std::size_t>(r)]);
        }
    }
    CHECK((o.flags & flag_bits) == (regs[17] & flag_bits));
    CHECK(o.rsp == (o.full ? h.site_rsp() - 128 : h.site_rsp()));
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

TEST_CASE("native conditions answer as the agent's interpreter on random expressions and give every register "
          "and flag back",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(2026);
    int compiled = 0;
    for (int i = 0; i < 3000; ++i) {
        program p;
        g.expression(p, 1 + static_cast<int>(g.next() % 4));
        p.op(OMPDBG_OP_END);
        if (p.code.size() > OMPDBG_AGENT_SITE_CODE_BYTES || !compile_native_filter(p.code, fake_site)) {
            continue;
        }
        ++compiled;
        INFO("program " << i << " of " << p.code.size() << " bytes");
        compare(h, p.code, registers(g));
    }
    CHECK(compiled > 2500);
}

TEST_CASE("native conditions: signed and unsigned comparisons, widths, division by zero and overflow, shifts",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(7);
    auto binary = [](std::uint64_t a, std::uint64_t b, std::uint8_t op) {
        program p;
        p.constant(a);
        p.constant(b);
        p.op(op);
        p.op(OMPDBG_OP_END);
        return p.code;
    };
    const std::uint64_t values[] = {0, 1, ~0ull, 0x8000000000000000ull, 0x7fffffffffffffffull, 63, 64, 5, ~4ull};
    for (auto a : values) {
        for (auto b : values) {
            for (std::uint8_t op : {OMPDBG_OP_LT_S, OMPDBG_OP_LT_U, OMPDBG_OP_LE_S, OMPDBG_OP_LE_U, OMPDBG_OP_EQ,
                                    OMPDBG_OP_NE, OMPDBG_OP_DIV_S, OMPDBG_OP_DIV_U, OMPDBG_OP_REM_S, OMPDBG_OP_REM_U,
                                    OMPDBG_OP_SHL, OMPDBG_OP_SHR_S, OMPDBG_OP_SHR_U}) {
                INFO("a " << a << " b " << b << " op " << int(op));
                compare(h, binary(a, b, op), registers(g));
            }
        }
    }
    // A value read 1, 2 and 4 bytes wide and sign-extended is compared as C does.
    for (unsigned size : {1u, 2u, 4u, 8u}) {
        program p;
        p.constant(reinterpret_cast<std::uint64_t>(&loadable[2]));
        p.op(OMPDBG_OP_LOAD_FRAME);
        p.u8(size);
        p.op(OMPDBG_OP_SEXT);
        p.u8(8 * size);
        p.constant(0);
        p.op(OMPDBG_OP_LT_S);
        p.op(OMPDBG_OP_END);
        compare(h, p.code, registers(g));
    }
}

TEST_CASE("native conditions read the site's registers, including rax, rcx, rdx, rsp and rip",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(11);
    for (unsigned r = 0; r <= 16; ++r) {
        for (int k = 0; k < 20; ++k) {
            auto regs = registers(g);
            // REG r == REG r + 0 (true), and REG r == its value + 1 (false), under a stack of
            // other words so that the saved registers' places move.
            program p;
            p.constant(5);
            p.constant(6);
            p.op(OMPDBG_OP_REG);
            p.u8(r);
            p.op(OMPDBG_OP_DUP);
            p.constant(static_cast<std::uint64_t>(k % 2));
            p.op(OMPDBG_OP_ADD);
            p.op(OMPDBG_OP_EQ);
            p.op(OMPDBG_OP_END);
            INFO("register " << r);
            compare(h, p.code, regs);
        }
    }
}

TEST_CASE("what the native code cannot decide like the interpreter is not compiled", "[tracer][jump_pad][native]") {
    auto refused = [](std::vector<std::uint8_t> code) { return !compile_native_filter(code, fake_site); };
    // LOAD (process_vm_readv), the flags register, an unknown register or opcode.
    CHECK(refused({OMPDBG_OP_CONST, 0, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_LOAD, 8, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_REG, 17, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_REG, 18, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_REG, 1, 0x7f, OMPDBG_OP_END}));
    // A stack underflow, an operand past the end, a backward jump, a jump into an operand,
    // depths that disagree where paths join, nothing at all.
    CHECK(refused({OMPDBG_OP_ADD, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_CONST, 1, 0}));
    CHECK(refused({OMPDBG_OP_REG, 1, OMPDBG_OP_JMP, 0, 0, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_REG, 1, OMPDBG_OP_JMP, 4, 0, OMPDBG_OP_REG, 2, OMPDBG_OP_END}));
    CHECK(refused({OMPDBG_OP_REG, 1, OMPDBG_OP_REG, 1, OMPDBG_OP_JZ, 8, 0, OMPDBG_OP_DUP, OMPDBG_OP_END}));
    CHECK(refused({}));
    // More than the interpreter's stack holds.
    std::vector<std::uint8_t> deep;
    for (unsigned i = 0; i <= OMPDBG_AGENT_STACK_DEPTH; ++i) {
        deep.insert(deep.end(), {OMPDBG_OP_REG, 1});
    }
    deep.push_back(OMPDBG_OP_END);
    CHECK(refused(deep));
}

TEST_CASE("native conditions that run off their end, or jump to it, go to the full path as the interpreter's "
          "undecided",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(3);
    compare(h, {OMPDBG_OP_CONST, 0, 0, 0, 0, 0, 0, 0, 0}, registers(g));
    compare(h, {OMPDBG_OP_CONST, 0, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_JMP, 13, 0, OMPDBG_OP_END}, registers(g));
    compare(h, {OMPDBG_OP_CONST, 0, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_END}, registers(g));
}

TEST_CASE("a counter's pad counts a hit in the thread's own shard as the agent does, and leaves the agent what "
          "only it can do",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(5);
    auto& control = ompdbg_agent_control;
    REQUIRE(control.shard_tls != 0);   // set by the agent's constructor
    const std::uint32_t index = 3;
    auto& site = control.sites[index];
    site = ompdbg_agent_site{};
    site.in_use = 1;
    site.enabled = 1;
    site.action = OMPDBG_ACTION_COUNT;
    const std::vector<std::uint8_t> always = {OMPDBG_OP_CONST, 1, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_END};
    std::memcpy(site.code, always.data(), always.size());
    site.code_len = static_cast<std::uint32_t>(always.size());
    auto passed = [&] {
        std::uint64_t sum = 0;
        for (auto& shard : control.shard) {
            sum += shard.passed[index];
        }
        return sum;
    };
    const ompdbg::tracer::internal::native_count count{reinterpret_cast<std::uint64_t>(&control), index};
    const std::vector<std::uint8_t> none;
    const std::vector<std::uint8_t> is_five = {OMPDBG_OP_REG, 5, OMPDBG_OP_CONST, 5, 0, 0, 0, 0, 0, 0, 0,
                                               OMPDBG_OP_EQ, OMPDBG_OP_END};
    auto regs = registers(g);
    // The agent gives the thread its shard at its first counted hit.
    auto block = regs;
    REQUIRE(ompdbg_agent_evaluate(&site, block.data()) == 0);
    std::uint64_t before = passed();
    REQUIRE(before >= 1);
    for (int i = 0; i < 10; ++i) {
        auto o = h.run(none, regs, count);
        CHECK(o.full == 0);
        CHECK(o.rsp == h.site_rsp());
        CHECK((o.flags & flag_bits) == (regs[17] & flag_bits));
        for (int r = 0; r < 16; ++r) {
            if (r != 7) {
                CHECK(o.regs[static_cast<std::size_t>(r)] == regs[static_cast<std::size_t>(r)]);
            }
        }
    }
    CHECK(passed() == before + 10);
    // With a condition: counted where it holds, nothing where it does not.
    regs[5] = 5;
    CHECK(h.run(is_five, regs, count).full == 0);
    regs[5] = 6;
    CHECK(h.run(is_five, regs, count).full == 0);
    CHECK(passed() == before + 11);
    // Hits to ignore, a disabled record, another action, a fork child: the agent's.
    site.ignore = 2;
    CHECK(h.run(none, regs, count).full == 1);
    site.ignore = 0;
    site.enabled = 0;
    CHECK(h.run(none, regs, count).full == 1);
    site.enabled = 1;
    site.action = OMPDBG_ACTION_STOP;
    CHECK(h.run(none, regs, count).full == 1);
    site.action = OMPDBG_ACTION_COUNT;
    control.forked = 1;
    CHECK(h.run(none, regs, count).full == 1);
    control.forked = 0;
    CHECK(passed() == before + 11);
    site = ompdbg_agent_site{};
}
