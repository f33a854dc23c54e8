// The direct form of native conditions (native_direct.cpp): comparisons of registers,
// constants and frame, global and thread-local slots joined by &&, || and !, compiled to
// compare-and-branch code. Run on real registers against the agent's interpreter as the
// stack compiler's code is (native_harness.hpp), at sites whose flags are live and dead;
// and the scan that finds the flags dead at a site.

#include "native_harness.hpp"

#include "internal/native_direct.hpp"
#include "internal/x86_decoder.hpp"

using ompdbg::tracer::internal::flags_dead_at;

namespace {

/// Random conditions of the direct form's shapes (and some just past it: odd widths).
class direct_generator {
public:
    explicit direct_generator(std::uint32_t seed) : g_(seed) {}

    void value(program& p) {
        switch (g_.next() % 6) {
        case 0: p.constant(g_.edge()); break;
        case 1: p.op(OMPDBG_OP_REG); p.u8(g_.next() % 17); break;
        case 2:   // a slot of a frame: %rbx holds &loadable[0] (frame(regs)); aligned or
                  // not (a packed member), and its 8 bytes inside loadable's 32
            p.op(OMPDBG_OP_REG);
            p.u8(3);
            p.constant(8 * (g_.next() % 3) + (g_.next() % 2) * 4);
            p.op(OMPDBG_OP_ADD);
            load(p);
            break;
        case 3:   // a global, past 32 bits
            p.constant(reinterpret_cast<std::uint64_t>(&loadable[g_.next() % 4]));
            load(p);
            break;
        case 4: {   // a thread-local: the TCB's own pointer, the stack guard
            static constexpr std::uint64_t at[] = {0, 0x10, 0x28};
            p.op(OMPDBG_OP_TP);
            p.constant(at[g_.next() % 3]);
            p.op(OMPDBG_OP_ADD);
            p.op(OMPDBG_OP_LOAD_FRAME);
            p.u8(8);
            break;
        }
        default: p.op(OMPDBG_OP_REG); p.u8(7); break;
        }
        if (g_.next() % 3 == 0) {
            static constexpr unsigned bits[] = {8, 16, 32, 32, 64, 0, 12};
            p.op(g_.next() % 2 ? OMPDBG_OP_SEXT : OMPDBG_OP_ZEXT);
            p.u8(bits[g_.next() % std::size(bits)]);
        }
    }

    void condition(program& p, int depth) {
        int pick = depth <= 0 ? 0 : static_cast<int>(g_.next() % 8);
        switch (pick) {
        case 1: condition(p, depth - 1); p.op(OMPDBG_OP_LNOT); return;
        case 2: {   // &&
            condition(p, depth - 1);
            auto to_false = p.jump(OMPDBG_OP_JZ);
            condition(p, depth - 1);
            p.op(OMPDBG_OP_LNOT);
            p.op(OMPDBG_OP_LNOT);
            auto to_end = p.jump(OMPDBG_OP_JMP);
            p.land(to_false);
            p.constant(0);
            p.land(to_end);
            return;
        }
        case 3: {   // ||
            condition(p, depth - 1);
            auto to_second = p.jump(OMPDBG_OP_JZ);
            p.constant(1);
            auto to_end = p.jump(OMPDBG_OP_JMP);
            p.land(to_second);
            condition(p, depth - 1);
            p.op(OMPDBG_OP_LNOT);
            p.op(OMPDBG_OP_LNOT);
            p.land(to_end);
            return;
        }
        case 4: {   // c ? a : b
            condition(p, depth - 1);
            auto to_else = p.jump(OMPDBG_OP_JZ);
            condition(p, depth - 1);
            auto to_end = p.jump(OMPDBG_OP_JMP);
            p.land(to_else);
            condition(p, depth - 1);
            p.land(to_end);
            return;
        }
        case 5: value(p); return;   // a value's truth
        default: {
            static constexpr std::uint8_t ops[] = {OMPDBG_OP_EQ,   OMPDBG_OP_NE,   OMPDBG_OP_LT_S,
                                                   OMPDBG_OP_LT_U, OMPDBG_OP_LE_S, OMPDBG_OP_LE_U};
            value(p);
            value(p);
            if (g_.next() % 8 == 0) {
                p.op(OMPDBG_OP_SWAP);
            }
            p.op(ops[g_.next() % std::size(ops)]);
            if (g_.next() % 4 == 0) {
                p.op(OMPDBG_OP_LNOT);   // > and >= are LE and LT negated
            }
            return;
        }
        }
    }

    generator& base() { return g_; }

private:
    void load(program& p) {
        static constexpr unsigned sizes[] = {1, 2, 4, 8, 8};
        p.op(OMPDBG_OP_LOAD_FRAME);
        p.u8(sizes[g_.next() % std::size(sizes)]);
    }
    generator g_;
};

/// Registers for the direct generator: %rbx points at the frame it reads (loadable).
std::array<std::uint64_t, 18> frame(generator& g) {
    auto regs = registers(g);
    regs[3] = reinterpret_cast<std::uint64_t>(&loadable[0]);
    return regs;
}

program condition_of(std::initializer_list<std::uint8_t> head, std::uint64_t c, std::uint8_t op) {
    program p;
    p.code.assign(head);
    p.constant(c);
    p.op(op);
    p.op(OMPDBG_OP_END);
    return p;
}

/// The number of instructions of a filter's code.
int instructions(const std::vector<std::byte>& code) {
    ompdbg::tracer::internal::x86_decoder d;
    const auto* p = reinterpret_cast<const std::uint8_t*>(code.data());
    std::size_t size = code.size();
    std::uint64_t addr = 0;
    int n = 0;
    while (d.next(p, size, addr)) {
        ++n;
    }
    REQUIRE(size == 0);
    return n;
}

}  // namespace

TEST_CASE("direct native conditions answer as the agent's interpreter on random comparisons, &&, || and ?:, at "
          "sites whose flags are live or dead",
          "[tracer][jump_pad][native]") {
    harness h;
    direct_generator g(21);
    int direct = 0, total = 0;
    for (int i = 0; i < 3000; ++i) {
        program p;
        g.condition(p, static_cast<int>(g.base().next() % 4));
        p.op(OMPDBG_OP_END);
        if (p.code.size() > OMPDBG_AGENT_SITE_CODE_BYTES || !compile_native_filter(p.code, fake_site)) {
            continue;
        }
        INFO("program " << i << " of " << p.code.size() << " bytes");
        ++total;
        const bool dead = i % 2 == 1;
        direct += compare(h, p.code, frame(g.base()), dead) ? 1 : 0;
    }
    CHECK(total > 2900);
    CHECK(direct > total * 3 / 4);
}

TEST_CASE("a direct native condition on a frame slot, a register or a global is a compare and a branch",
          "[tracer][jump_pad][native]") {
    harness h;
    generator g(13);
    auto regs = frame(g);
    loadable[1] = 999999;
    // `i == 999999` for a long at 8(%rbx): the workload of issue 21.
    auto frame_slot = condition_of({OMPDBG_OP_REG, 3, OMPDBG_OP_CONST, 8, 0, 0, 0, 0, 0, 0, 0, OMPDBG_OP_ADD,
                                    OMPDBG_OP_LOAD_FRAME, 8},
                                   999999, OMPDBG_OP_EQ);
    for (bool dead : {false, true}) {
        auto f = compile_native_filter(frame_slot.code, fake_site, std::nullopt, dead);
        REQUIRE(f);
        CHECK(f->direct);
        // push %rcx, mov, lea, jrcxz, the two exits: no flags changed, dead or not.
        CHECK(instructions(f->code) <= 8);
        CHECK(compare(h, frame_slot.code, regs, dead));
        loadable[1] = 999998;
        CHECK(compare(h, frame_slot.code, regs, dead));
        loadable[1] = 999999;
    }
    // `i < 999999`: the flags kept in %ax (push %rax, lahf, seto, cmp, jcc, then each exit
    // gives them back with add, sahf, pop %rax); where they are dead the false exit does not.
    auto ordered = frame_slot;
    ordered.code[ordered.code.size() - 2] = OMPDBG_OP_LT_S;
    for (bool dead : {false, true}) {
        auto f = compile_native_filter(ordered.code, fake_site, std::nullopt, dead);
        REQUIRE(f);
        CHECK(f->direct);
        CHECK(instructions(f->code) == (dead ? 11 : 13));
        for (std::uint64_t v : {999998ull, 999999ull, 0ull - 1, 1ull << 63}) {
            loadable[1] = v;
            CHECK(compare(h, ordered.code, regs, dead));
        }
    }
    loadable[1] = 999999;
    // An int (4 bytes, sign-extended) against a negative constant, as agent_expr.cpp writes
    // `n == -5`: CONST 5, SEXT 32, NEG, SEXT 32.
    program negative;
    negative.code = {OMPDBG_OP_REG, 3, OMPDBG_OP_LOAD_FRAME, 4, OMPDBG_OP_SEXT, 32};
    negative.constant(5);
    negative.code.insert(negative.code.end(), {OMPDBG_OP_SEXT, 32, OMPDBG_OP_NEG, OMPDBG_OP_SEXT, 32, OMPDBG_OP_EQ,
                                               OMPDBG_OP_END});
    for (std::uint64_t v : {0xfffffffbull, 0xfffffffffffffffbull, 5ull, 0x1fffffffbull}) {
        loadable[0] = v;
        for (bool dead : {false, true}) {
            CHECK(compare(h, negative.code, regs, dead));
        }
    }
    loadable[0] = 0x8000000000000001ull;
    loadable[1] = 0xfffffffffffffffeull;
    // Ordered comparisons with the flags live keep them in %ax; registers the code reads,
    // %rcx included, are not its scratch registers.
    for (std::uint8_t op : {OMPDBG_OP_LT_S, OMPDBG_OP_LE_U, OMPDBG_OP_EQ, OMPDBG_OP_NE}) {
        for (unsigned r : {0u, 1u, 2u, 4u, 7u, 8u, 16u}) {
            for (int k = 0; k < 3; ++k) {
                auto rr = frame(g);
                program p;
                p.op(OMPDBG_OP_REG);
                p.u8(2);   // %rcx read (and dropped: the direct form resolves the stack)
                p.op(OMPDBG_OP_POP);
                p.op(OMPDBG_OP_REG);
                p.u8(r);
                p.constant(k == 0 ? rr[r < 16 ? r : 0] : g.edge());
                p.op(op);
                p.op(OMPDBG_OP_END);
                INFO("register " << r << " op " << int(op));
                for (bool dead : {false, true}) {
                    compare(h, p.code, rr, dead);
                }
            }
        }
    }
}

TEST_CASE("the flags are dead at a site only where straight-line code writes them all before reading any",
          "[tracer][jump_pad][native]") {
    auto dead = [](std::vector<int> bytes) {
        std::vector<std::byte> code;
        for (int b : bytes) {
            code.push_back(static_cast<std::byte>(b));
        }
        return flags_dead_at(code, 0x401000);
    };
    // bench_fast_cond's f+15: mov -0x1c(%rbp),%eax; and $0x3f,%eax (AF left undefined).
    CHECK(dead({0x8b, 0x45, 0xe4, 0x83, 0xe0, 0x3f, 0x48, 0x98}));
    CHECK(dead({0x48, 0x83, 0xc0, 0x01}));                     // add $1,%rax
    CHECK(dead({0x48, 0x89, 0xc8, 0x48, 0x39, 0xc8, 0x75, 0x02}));   // mov; cmp; jne
    CHECK(dead({0xff, 0xc0, 0x48, 0x01, 0xc8}));               // inc (not CF); add
    CHECK_FALSE(dead({0x75, 0x02}));                            // jne
    CHECK_FALSE(dead({0x48, 0x11, 0xc8}));                      // adc reads CF
    CHECK_FALSE(dead({0xff, 0xc0, 0xc3}));                      // inc leaves CF; ret
    CHECK_FALSE(dead({0x0f, 0x94, 0xc0, 0x48, 0x01, 0xc8}));   // sete; add
    CHECK_FALSE(dead({0x48, 0x89, 0xc8}));                      // a move, then nothing known
    CHECK_FALSE(dead({0xe8, 0, 0, 0, 0, 0x48, 0x01, 0xc8}));   // call
    CHECK_FALSE(dead({0x9c, 0x48, 0x01, 0xc8}));               // pushfq
    CHECK_FALSE(dead({}));
}
