// Conditions compiled to native code for the pads (native_filter.cpp, native_direct.cpp),
// run here on real registers and compared with the agent's own interpreter (agent/src/agent.c)
// on the same register values: the native code must answer "false" exactly where the
// interpreter answers false, go to the full path everywhere else (true, or undecided: a
// division by zero, a shift of 64), and give back every register and the arithmetic flags as
// they were.

#include "native_harness.hpp"

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
