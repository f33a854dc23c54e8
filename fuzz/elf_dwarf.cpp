// Fuzz target: an ELF file with DWARF, opened and read through libdwarfview the way the
// CLI reads a program: symbols, the DWARF index, function / global / type lookups by name,
// type printing (ptype), line tables in both directions, variables in scope and their
// location expressions evaluated against a fake frame. Any input may make these throw
// ompdbg::error; none may crash, hang or trip a sanitizer.

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/location.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

using namespace ompdbg;

// Memory reads answer zeros, registers a fixed value: enough for every location
// expression to run to its end.
class fake_frame : public dwarf::location_context {
public:
    std::uint64_t pc() const override { return pc_; }
    std::uint64_t load_bias() const override { return 0; }
    std::optional<std::uint64_t> read_register(int regno) const override {
        return 0x7ffe0000 + static_cast<std::uint64_t>(regno) * 8;
    }
    void read_memory(std::uint64_t, std::span<std::byte> out) const override {
        std::memset(out.data(), 0, out.size());
    }
    std::optional<std::uint64_t> cfa() const override { return 0x7ffe1000; }
    std::optional<std::uint64_t> tls_address(std::uint64_t offset) const override { return 0x7f000000 + offset; }
    std::uint64_t pc_ = 0;
};

// One call that may throw ompdbg::error on bad input: the error is an answer, not a bug.
template <typename F>
void tolerate(F&& f) {
    try {
        f();
    } catch (const error&) {
    }
}

// The names the examples use (structs.c, crash.c), so that seeds reach real DIEs.
constexpr const char* function_names[] = {"main", "do_segv", "area_of", "factorial", "worker"};
constexpr const char* type_names[] = {"struct point", "struct rect", "union number", "enum color", "point_t",
                                      "int", "unsigned long", "struct node"};
constexpr const char* global_names[] = {"global_counter", "global_point", "global_rect", "tls_point"};

void exercise(const dwarf::elf_file& elf) {
    (void)elf.symbols();
    for (const char* n : function_names) {
        (void)elf.find_symbols(n);
    }
    (void)elf.symbol_at(elf.entry());
    (void)elf.plt_symbol_at(elf.entry());
    auto* dbg = elf.debug();
    if (dbg == nullptr) {
        return;
    }
    tolerate([&] { (void)dbg->all_function_names(); });
    tolerate([&] { (void)dbg->source_files(); });
    for (const char* t : type_names) {
        tolerate([&] {
            if (auto ty = dbg->find_type(t)) {
                (void)dwarf::ptype_text(*ty);
                (void)dwarf::whatis_text(*ty);
                (void)ty->size();
                (void)ty->members();
                (void)ty->enumerators();
            }
        });
    }
    for (const char* g : global_names) {
        tolerate([&] {
            if (auto v = dbg->find_global(g)) {
                (void)dwarf::ptype_text(v->var_type);
                fake_frame frame;
                (void)dwarf::evaluate_location(*v, frame);
            }
        });
    }
    for (const char* n : function_names) {
        std::vector<dwarf::function> fns;
        tolerate([&] { fns = dbg->find_functions(n); });
        for (const auto& fn : fns) {
            std::uint64_t pc = fn.breakpoint_pc;
            tolerate([&] { (void)dbg->line_at(pc); });
            tolerate([&] { (void)dbg->line_range_at(pc); });
            tolerate([&] { (void)dbg->function_chain_at(pc); });
            tolerate([&] { (void)dbg->line_rows_of_function(fn); });
            tolerate([&] {
                if (auto l = dbg->line_at(pc)) {
                    (void)dbg->addresses_for_line(l->file, l->line);
                    (void)dbg->display_name(l->file);
                }
            });
            tolerate([&] {
                fake_frame frame;
                frame.pc_ = pc;
                for (const auto& v : dbg->variables_at(pc)) {
                    (void)dwarf::ptype_text(v.var_type);
                    tolerate([&] { (void)dwarf::evaluate_location(v, frame); });
                }
            });
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool once = [] {
        // Never search the machine for separate debug files of a fuzzed build-id.
        dwarf::elf_file::set_debug_file_directories({});
        return true;
    }();
    (void)once;
    int fd = ::memfd_create("fuzz-elf", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (size == 0 || ::write(fd, data, size) == static_cast<ssize_t>(size)) {
        tolerate([&] {
            auto elf = dwarf::elf_file::open("/proc/self/fd/" + std::to_string(fd));
            exercise(*elf);
        });
    }
    ::close(fd);
    return 0;
}
