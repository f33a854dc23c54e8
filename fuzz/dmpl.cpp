// Fuzz target: what the DMPL host does with a DMPL library's answers. A fake library
// (fuzz_dmpl_plugin.c) takes every answer from the input: demangled names with their
// lengths, flags and lines (DMPL_name_too_long asking for any size), return codes and
// error strings, runtime routine names, reduction routine lists, TLS addresses; and it
// calls the host's callbacks with fuzzed handles, names, addresses and sizes. The host
// must turn all of it into values or one-line errors, never crash or hang.

#include "fake_library.hpp"
#include "memory_image.hpp"

#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"

namespace {

using namespace ompdbg;

using fake = fuzz::fake_library<plugins::dmpl_library>;

fake& plugin() {
    static fake p = fake::load(OMPDBG_FUZZ_DMPL_PLUGIN, "fuzz_dmpl_set_answers");
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto& p = plugin();
    // The first half feeds the library's answers, the second is the target's memory.
    std::size_t half = size / 2;
    p.set_answers(data, half);
    fuzz::memory_image image(data + half, size - half);
    (void)p.lib->demangle("main.omp_outlined", DMPL_hint_copied_in);
    (void)p.lib->demangle("__omp_outlined__::x");
    (void)p.lib->rtl_names(DMPL_lang_c);
    (void)p.lib->reduction_routines(DMPL_lang_c);
    (void)p.lib->error_string(DMPL_first_user_code);
    {
        plugins::dmpl_process proc(p.lib, image, [](pid_t, std::uint64_t) { return std::optional<std::uint64_t>(); });
        for (int i = 0; i < 4; ++i) {
            (void)proc.tls_address(4242, fuzz::memory_image::base + 16 * static_cast<std::uint64_t>(i));
        }
        proc.forget_exited_threads();
    }
    p.set_answers(nullptr, 0);
    return 0;
}
