// Conditions compiled into agent bytecode (agent_expr.cpp) and run by the agent's own
// interpreter (agent/src/agent.c) on a register block built here, with the variables placed
// where libdwarfview's location evaluator says they are: both must agree.

#include <catch2/catch.hpp>

#include "ompdbg_test_paths.hpp"

#include "ompdbg/agent/agent_abi.h"
#include "ompdbg/dwarf/agent_expr.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/location.hpp"

#include <array>
#include <cstring>
#include <string>

extern "C" int ompdbg_agent_run(const std::uint8_t* code, std::uint32_t len, const std::uint64_t* regs);

using ompdbg::dwarf::compile_agent_condition;
using ompdbg::dwarf::elf_file;

namespace {

std::string fast_loop(const char* opt) {
    return std::string(ompdbg::test::targets_dir) + "/fast/fast_loop-gcc-dwarf5-" + opt;
}

/// A fake thread at the breakpoint of f: registers and a stack of our own.
struct site_frame {
    std::array<std::uint64_t, OMPDBG_AGENT_REGS + 1> regs{};
    std::array<std::uint64_t, 64> stack{};
};

class frame_context : public ompdbg::dwarf::location_context {
public:
    frame_context(const site_frame& f, std::uint64_t pc, std::uint64_t cfa) : f_(f), pc_(pc), cfa_(cfa) {}
    std::uint64_t pc() const override { return pc_; }
    std::uint64_t load_bias() const override { return 0; }
    std::optional<std::uint64_t> read_register(int r) const override {
        return r <= 16 ? std::optional<std::uint64_t>(f_.regs[static_cast<std::size_t>(r)]) : std::nullopt;
    }
    void read_memory(std::uint64_t addr, std::span<std::byte> out) const override {
        std::memcpy(out.data(), reinterpret_cast<const void*>(addr), out.size());
    }
    std::optional<std::uint64_t> cfa() const override { return cfa_; }
    std::optional<std::uint64_t> tls_address(std::uint64_t) const override { return std::nullopt; }

private:
    const site_frame& f_;
    std::uint64_t pc_, cfa_;
};

struct fixture {
    std::unique_ptr<elf_file> elf;
    ompdbg::dwarf::function fn;
    explicit fixture(const char* opt) : elf(elf_file::open(fast_loop(opt))) {
        REQUIRE(elf->debug() != nullptr);
        auto fns = elf->debug()->find_functions("f");
        REQUIRE(fns.size() == 1);
        fn = fns.front();
    }
    /// Sets i and tid of f in `frame` where the DWARF says they live at the breakpoint.
    void place(site_frame& frame, std::int64_t i, std::int32_t tid) {
        frame.regs[6] = reinterpret_cast<std::uint64_t>(&frame.stack[32]);   // rbp
        frame.regs[7] = reinterpret_cast<std::uint64_t>(&frame.stack[16]);   // rsp
        auto rule = ompdbg::dwarf::cfa_rule_at(*elf->debug(), fn.breakpoint_pc);
        REQUIRE(rule);
        std::uint64_t cfa = frame.regs[static_cast<std::size_t>(rule->dwarf_regno)] + static_cast<std::uint64_t>(rule->offset);
        frame_context ctx(frame, fn.breakpoint_pc, cfa);
        for (auto& v : elf->debug()->variables_at(fn.breakpoint_pc)) {
            auto loc = ompdbg::dwarf::evaluate_location(v, ctx);
            std::uint64_t value = v.name == "i" ? static_cast<std::uint64_t>(i)
                                                : static_cast<std::uint64_t>(static_cast<std::uint32_t>(tid));
            if (auto* m = std::get_if<ompdbg::dwarf::location::memory>(&loc.value)) {
                std::memcpy(reinterpret_cast<void*>(m->addr), &value, v.name == "i" ? 8 : 4);
            } else if (auto* r = std::get_if<ompdbg::dwarf::location::register_>(&loc.value)) {
                frame.regs[static_cast<std::size_t>(r->dwarf_regno)] = value;
            }
        }
    }
    bool run(const std::string& cond, std::int64_t i, std::int32_t tid) {
        auto c = compile_agent_condition(cond, *elf->debug(), fn.breakpoint_pc, 0);
        INFO(cond << ": " << c.reason);
        REQUIRE(c.ok());
        site_frame frame;
        place(frame, i, tid);
        return ompdbg_agent_run(c.code.data(), static_cast<std::uint32_t>(c.code.size()), frame.regs.data()) != 0;
    }
};

}  // namespace

TEST_CASE("agent bytecode of a condition on stack locals answers as C does", "[dwarf][agent]") {
    fixture fx("O0");
    CHECK(fx.run("i == 999999", 999999, 1));
    CHECK_FALSE(fx.run("i == 999999", 999998, 1));
    CHECK(fx.run("i * 2 - 1 > 10 && tid != 3", 6, 2));
    CHECK_FALSE(fx.run("i * 2 - 1 > 10 && tid != 3", 6, 3));
    CHECK(fx.run("tid == 7 || i % 1000 == 0", 5000, 1));
    CHECK(fx.run("i < 0", -1, 0));
    CHECK_FALSE(fx.run("tid < 0u", -1, 0));   // int converted to unsigned int
    CHECK(fx.run("(unsigned char)tid == 255", 0, 511));
    CHECK(fx.run("!(i & 1) ? tid == 2 : tid == 3", 4, 2));
    CHECK(fx.run("$rbp != 0 && -i == 5", -5, 0));
}

TEST_CASE("agent bytecode reads a parameter held in a register at -O2", "[dwarf][agent]") {
    fixture fx("O2");
    CHECK(fx.run("i == 777", 777, 0));
    CHECK_FALSE(fx.run("i == 777", 776, 0));
    CHECK(fx.run("tid == 3 && i > 10", 11, 3));
}

TEST_CASE("conditions on globals, members and array elements compile to agent bytecode", "[dwarf][agent]") {
    fixture fx("O0");
    for (const char* cond : {"global_limit > 4", "origin.y == -4", "values[2] == 3", "global_i == i",
                             "calls_by_thread[tid] > 100", "&origin != 0 || 1"}) {
        auto c = compile_agent_condition(cond, *fx.elf->debug(), fx.fn.breakpoint_pc, 0x555555554000);
        INFO(cond << ": " << c.reason);
        if (std::string(cond).find('&') == std::string::npos) {
            CHECK(c.ok());
        } else {
            CHECK_FALSE(c.ok());
        }
    }
}

TEST_CASE("what the agent cannot evaluate is refused with a reason", "[dwarf][agent]") {
    fixture fx("O0");
    for (const char* cond : {"f(1, 2) == 2", "i > 1.5", "$_siginfo != 0", "nosuch == 1", "i = 3", "i ==",
                             "\"abc\" != 0"}) {
        auto c = compile_agent_condition(cond, *fx.elf->debug(), fx.fn.breakpoint_pc, 0);
        INFO(cond);
        CHECK_FALSE(c.ok());
        CHECK_FALSE(c.reason.empty());
    }
}
