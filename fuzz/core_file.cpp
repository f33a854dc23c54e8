// Fuzz target: a core file of the `crash` example, opened and read through libtracer's
// core_file the way `ompdbg core PROG CORE` reads it: notes (threads, registers, signal,
// NT_FILE mappings, command line), memory through the load segments, the modules found
// through the dynamic linker's link map in the core's memory, and a backtrace of every
// thread. Any input may throw ompdbg::error; none may crash, hang or trip a sanitizer.

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/core_file.hpp"
#include "ompdbg/tracer/unwinder.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace ompdbg;

template <typename F>
void tolerate(F&& f) {
    try {
        f();
    } catch (const error&) {
    }
}

void exercise(tracer::core_file& core) {
    (void)core.signal();
    (void)core.si_code();
    (void)core.fault_address();
    (void)core.command_line();
    (void)core.mappings();
    (void)core.warnings();
    (void)core.vdso_range();
    tolerate([&] { (void)core.modules(); });
    std::array<std::byte, 64> buf{};
    for (auto* t : core.threads()) {
        tolerate([&] {
            const auto& r = t->regs();
            (void)core.try_read_memory(virt_addr(r.pc()), buf);
            (void)core.try_read_memory(virt_addr(r.sp()), buf);
        });
        (void)t->name();
    }
    for (const auto& m : core.mappings()) {
        (void)core.try_read_memory(virt_addr(m.start), buf);
    }
    tolerate([&] {
        tracer::unwinder unwind(core);
        for (auto* t : core.threads()) {
            tolerate([&] { (void)unwind.backtrace(t->tid(), 64); });
        }
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    int fd = ::memfd_create("fuzz-core", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (size == 0 || ::write(fd, data, size) == static_cast<ssize_t>(size)) {
        tolerate([&] {
            auto core = tracer::core_file::open("/proc/self/fd/" + std::to_string(fd),
                                                OMPDBG_FUZZ_EXAMPLES "/crash-gcc-dwarf5-O0");
            exercise(*core);
        });
    }
    ::close(fd);
    return 0;
}
