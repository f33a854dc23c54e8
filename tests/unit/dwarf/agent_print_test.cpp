// The agent's dprintf formatting (agent/src/agent_print.c) against C's snprintf, which is
// what ompdbg's own printf (and gdb's) uses: every flag set, width and precision the
// debugger hands to the agent (fast_dprintf.cpp), over integers at the edges of each size,
// %c, %s (cut and padded, NULL) and %p. The agent runs here, in the test process: a
// constant bytecode is the argument, the line is read back from its ring.

#include <catch2/catch.hpp>

#include "ompdbg/agent/agent_abi.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" int ompdbg_agent_print(const ompdbg_agent_site* site, const std::uint64_t* regs);
extern "C" ompdbg_agent_ring ompdbg_agent_ring;

namespace {

/// The line the agent makes for `format` (the agent's spelling) of one argument `value`;
/// "<none>" when it leaves the line to the debugger.
std::string agent_line(const std::string& format, std::uint64_t value) {
    ompdbg_agent_site site{};
    site.code[0] = OMPDBG_OP_CONST;
    std::memcpy(site.code + 1, &value, 8);
    site.code[9] = OMPDBG_OP_END;
    site.arg_at[0] = 0;
    site.arg_len[0] = 10;
    site.nargs = 1;
    REQUIRE(format.size() <= sizeof site.format);
    std::memcpy(site.format, format.data(), format.size());
    site.format_len = static_cast<std::uint32_t>(format.size());
    std::uint64_t regs[OMPDBG_AGENT_REGS + 1] = {};
    if (ompdbg_agent_print(&site, regs) == 0) {
        return "<none>";
    }
    auto& ring = ompdbg_agent_ring;
    const auto& line = ring.lines[(ring.head - 1) % OMPDBG_AGENT_RING_LINES];
    std::string out(line.text, line.len);
    ring.tail = ring.head;   // the line is read: its room is free again
    return out;
}

template <typename T>
std::string c_line(const std::string& spec, T value) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, spec.c_str(), value);
    REQUIRE(n >= 0);
    return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<std::string> flag_sets() {
    std::vector<std::string> out;
    const std::string flags = "-+ #0";
    for (unsigned mask = 0; mask < 32; ++mask) {
        std::string f;
        for (unsigned b = 0; b < 5; ++b) {
            if ((mask & (1u << b)) != 0) {
                f += flags[b];
            }
        }
        out.push_back(f);
    }
    return out;
}

const std::vector<std::string> widths = {"", "1", "7", "12", "30"};
const std::vector<std::string> precisions = {"", ".", ".0", ".1", ".3", ".10", ".25"};

}  // namespace

TEST_CASE("agent dprintf: integer conversions with every flag, width and precision are C's", "[dwarf][agent]") {
    const std::vector<std::int64_t> values = {0, 1, -1, 7, 8, 42, -42, 255, 65535, 65536, 70000, -70000, INT_MAX,
                                              INT_MIN, static_cast<std::int64_t>(UINT_MAX), 4294967296LL,
                                              123456789012345LL, LLONG_MAX, LLONG_MIN};
    std::size_t compared = 0;
    for (char conv : std::string("duoxX")) {
        for (const std::string size : {"", "L", "h"}) {
            for (const auto& flags : flag_sets()) {
                if (conv == 'd' && flags.find('#') != std::string::npos) {
                    continue;   // undefined in C: the debugger prints it itself
                }
                for (const auto& width : widths) {
                    for (const auto& precision : precisions) {
                        const std::string text = flags + width + precision;
                        for (std::int64_t v : values) {
                            std::string want;
                            auto u = static_cast<std::uint64_t>(v);
                            if (size == "L") {
                                want = conv == 'd' ? c_line("%" + text + "ll" + conv, static_cast<long long>(v))
                                                   : c_line("%" + text + "ll" + conv, static_cast<unsigned long long>(u));
                            } else {
                                const std::string length = size == "h" ? "h" : "";
                                want = conv == 'd' ? c_line("%" + text + length + conv, static_cast<int>(v))
                                                   : c_line("%" + text + length + conv, static_cast<unsigned>(u));
                            }
                            INFO("%" << text << size << conv << " of " << v);
                            REQUIRE(agent_line("%" + text + size + conv, u) == want);
                            ++compared;
                        }
                    }
                }
            }
        }
    }
    CHECK(compared > 50000);
}

TEST_CASE("agent dprintf: %c, %s and %p with widths and precisions are the debugger's", "[dwarf][agent]") {
    static const char text[] = "dprintf in the agent";
    for (const std::string flags : {"", "-"}) {
        for (const auto& width : widths) {
            for (const auto& precision : precisions) {
                const std::string spec = flags + width + precision;
                INFO(spec);
                CHECK(agent_line("%" + spec + "c", 'q') == c_line("%" + spec + "c", 'q'));
                CHECK(agent_line("%" + spec + "s", reinterpret_cast<std::uintptr_t>(text)) ==
                      c_line("%" + spec + "s", text));
                // A null string is "(null)", cut to the precision as the debugger's printf passes it.
                CHECK(agent_line("%" + spec + "s", 0) == c_line("%" + spec + "s", "(null)"));
            }
            // %p: 0x... as %#lx, or (nil), padded to the width.
            const std::string spec = flags + width;
            auto p = reinterpret_cast<std::uintptr_t>(text);
            CHECK(agent_line("%" + spec + "p", p) == c_line("%#" + spec + "llx", static_cast<unsigned long long>(p)));
            CHECK(agent_line("%" + spec + "p", 0) == c_line("%" + spec + "s", "(nil)"));
        }
    }
    // Literal text and %% around a conversion.
    CHECK(agent_line("a%%b[%5d]c", 42) == "a%b[   42]c");
}

TEST_CASE("agent dprintf: what the agent cannot make is left to the debugger", "[dwarf][agent]") {
    CHECK(agent_line("%f", 0) == "<none>");                 // no floating point in the agent
    CHECK(agent_line("%999d", 1) == "<none>");              // wider than a line
    CHECK(agent_line("%", 1) == "<none>");                  // a format program cut short
    std::string big(OMPDBG_AGENT_LINE_BYTES + 10, 'x');
    big.back() = '\0';
    CHECK(agent_line("%s", reinterpret_cast<std::uintptr_t>(big.data())) == "<none>");   // longer than a line
    CHECK(agent_line("%.5s", reinterpret_cast<std::uintptr_t>(big.data())) == "xxxxx");
}
