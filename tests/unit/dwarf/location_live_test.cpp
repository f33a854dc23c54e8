// evaluate_location on a real stopped process: gdb runs the program to a breakpoint and
// reports registers, the frame's CFA and the addresses of variables; our evaluation of the
// same DWARF with those registers must land on the same addresses.

#include "elf_test_support.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/location.hpp"

#include <map>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
using ompdbg::dwarf::location;

namespace {

class gdb_frame_context : public ompdbg::dwarf::location_context {
public:
    std::uint64_t pc_ = 0, bias_ = 0, fs_base_ = 0, tls_size_ = 0;
    std::map<int, std::uint64_t> regs_;
    std::optional<std::uint64_t> cfa_;

    std::uint64_t pc() const override { return pc_; }
    std::uint64_t load_bias() const override { return bias_; }
    std::optional<std::uint64_t> read_register(int regno) const override {
        auto it = regs_.find(regno);
        if (it == regs_.end()) return std::nullopt;
        return it->second;
    }
    void read_memory(std::uint64_t addr, std::span<std::byte>) const override {
        ompdbg::error::send("Cannot access memory at address " + fmt_hex(addr));
    }
    std::optional<std::uint64_t> cfa() const override { return cfa_; }
    // x86-64 variant II: the executable's TLS block ends at the thread pointer.
    std::optional<std::uint64_t> tls_address(std::uint64_t offset) const override {
        return fs_base_ - tls_size_ + offset;
    }
};

std::uint64_t value_of(const std::string& out, const std::string& label) {
    std::smatch m;
    std::regex re("(?:^|\n)" + label + R"(=(0x[0-9a-f]+))");
    REQUIRE(std::regex_search(out, m, re));
    return std::stoull(m[1].str(), nullptr, 16);
}

}  // namespace

TEST_CASE("frame-based locals, globals and thread-locals evaluate to gdb's addresses in a live process", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c", {0})));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    int line = marker_line("dwarf_c.c", "blocks_inner");
    std::vector<std::string> names{"inner", "total", "n", "i", "global_counter", "file_static", "thread_value"};
    std::vector<std::string> cmds{"printf \"main_file=0x%lx\\n\", (long)&main", "break dwarf_c.c:" + std::to_string(line),
                                  "run", "printf \"pc=0x%lx\\n\", (long)$pc",
                                  "printf \"rbp=0x%lx\\n\", (long)$rbp", "printf \"rsp=0x%lx\\n\", (long)$rsp",
                                  "printf \"fs=0x%lx\\n\", (long)$fs_base", "printf \"main_run=0x%lx\\n\", (long)&main",
                                  "info frame"};
    for (auto& n : names) {
        cmds.push_back("printf \"" + n + "=0x%lx\\n\", (long)&" + n);
    }
    cmds.push_back("kill");
    std::string out = gdb(bin, cmds);
    INFO(out);
    gdb_frame_context ctx;
    ctx.pc_ = value_of(out, "pc");
    ctx.bias_ = value_of(out, "main_run") - value_of(out, "main_file");
    ctx.regs_[6] = value_of(out, "rbp");
    ctx.regs_[7] = value_of(out, "rsp");
    ctx.fs_base_ = value_of(out, "fs");
    auto tls = f->tls().value();
    ctx.tls_size_ = (tls.memsz + tls.align - 1) / tls.align * tls.align;
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"(frame at (0x[0-9a-f]+))")));
    ctx.cfa_ = std::stoull(m[1].str(), nullptr, 16);

    auto vars = d->variables_at(ctx.pc_ - ctx.bias_);
    for (auto& n : names) {
        INFO(n);
        std::optional<ompdbg::dwarf::variable> v;
        for (auto& x : vars) {
            if (x.name == n) v = x;
        }
        if (!v) v = d->find_global(n);
        REQUIRE(v);
        auto loc = ompdbg::dwarf::evaluate_location(*v, ctx);
        auto* mem = std::get_if<location::memory>(&loc.value);
        REQUIRE(mem != nullptr);
        CHECK(mem->addr == value_of(out, n));
    }
}

TEST_CASE("evaluate_location returns or throws a clean error at every pc of an -O2 build", "[dwarf]") {
    // Location lists, entry values, register and implicit locations of optimized code:
    // every variable at every pc of every function.
    auto bin = target("dwarf_c", "gcc", 5, 2);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    struct any_context : ompdbg::dwarf::location_context {
        std::uint64_t pc_ = 0;
        std::uint64_t pc() const override { return pc_; }
        std::uint64_t load_bias() const override { return 0; }
        std::optional<std::uint64_t> read_register(int r) const override { return 0x1000 + r; }
        void read_memory(std::uint64_t, std::span<std::byte> out) const override {
            std::fill(out.begin(), out.end(), std::byte{0});
        }
        std::optional<std::uint64_t> cfa() const override { return 0x7000; }
        std::optional<std::uint64_t> tls_address(std::uint64_t o) const override { return o; }
    } ctx;
    int evaluated = 0;
    for (auto& name : d->all_function_names()) {
        for (auto& fn : d->find_functions(name)) {
            for (auto& [lo, hi] : fn.ranges) {
                for (std::uint64_t pc = lo; pc < hi; ++pc) {
                    ctx.pc_ = pc;
                    for (auto& v : d->variables_at(pc)) {
                        try {
                            (void)ompdbg::dwarf::evaluate_location(v, ctx);
                            ++evaluated;
                        } catch (const ompdbg::error&) {
                        }
                    }
                }
            }
        }
    }
    CHECK(evaluated > 0);
}
