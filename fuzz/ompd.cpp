// Fuzz target: what the OMPD host does with an OMPD library's answers. A fake libompd
// (fuzz_ompd_lib.c) takes every answer from the input: return codes, handles (or NULL with
// ompd_rc_ok), states and their names, ICV lists, numbers and strings, task functions and
// frames; and it calls the host's callbacks with fuzzed contexts, symbol names, addresses,
// sizes and thread ids. The host walks it as `omp threads`, `omp regions`, `omp tasks` and
// `omp icvs` do and must turn all of it into values or one-line errors (ompdbg::error),
// never crash, hang or loop without end.

#include "fake_library.hpp"
#include "memory_image.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/ompd.hpp"

namespace {

using namespace ompdbg;

using fake = fuzz::fake_library<plugins::ompd_library>;

fake& library() {
    static fake l = fake::load(OMPDBG_FUZZ_OMPD_LIB, "fuzz_ompd_set_answers");
    return l;
}

// What `omp regions` / `omp tasks` do from one thread: its region chain and task chain.
void walk(plugins::ompd_address_space& as, const plugins::omp_thread& t) {
    (void)as.os_thread_of(t);
    auto [state, wait] = as.state(t);
    (void)wait;
    (void)as.state_name(state);
    for (const auto& icv : as.icvs()) {
        (void)as.icv(t, icv).to_string();
    }
    auto p = as.current_parallel(t);
    for (int depth = 0; p && depth < 8; ++depth) {
        (void)as.icv_number(*p, "team-size-var");
        if (auto member = as.thread_in_parallel(*p, depth)) {
            (void)as.same(*member, t);
        }
        if (auto task = as.task_in_parallel(*p, 0)) {
            (void)as.task_function(*task);
        }
        auto outer = as.enclosing_parallel(*p);
        if (outer) {
            (void)as.same(*outer, *p);
        }
        p = outer;
    }
    auto task = as.current_task(t);
    for (int depth = 0; task && depth < 8; ++depth) {
        (void)as.task_frame(*task);
        (void)as.task_parallel(*task);
        (void)as.scheduling_task(*task);
        auto gen = as.generating_task(*task);
        if (gen) {
            (void)as.same(*gen, *task);
        }
        task = gen;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto& l = library();
    // The first half feeds the library's answers, the second is the target's memory (what
    // read_memory and read_string see).
    std::size_t half = size / 2;
    l.set_answers(data, half);
    fuzz::memory_image image(data + half, size - half);
    try {
        plugins::ompd_address_space as(l.lib, image,
                                       [](pid_t, const tracer::loaded_module&, std::uint64_t) {
                                           return std::optional<std::uint64_t>();
                                       });
        (void)as.omp_version();
        for (const auto& icv : as.icvs()) {
            (void)as.icv(icv).to_string();
        }
        for (pid_t tid = 4242; tid < 4245; ++tid) {
            try {
                if (auto t = as.thread_of(tid)) {
                    walk(as, *t);
                }
            } catch (const error&) {
            }
        }
        as.invalidate();
        (void)as.initialize_device(1, 7);
    } catch (const error&) {
        // One clear line for the user: the right answer to a library that failed.
    }
    l.set_answers(nullptr, 0);
    return 0;
}
