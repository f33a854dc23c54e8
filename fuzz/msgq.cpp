// Fuzz target: what the message-queue host does with a message-queue DLL's answers. A fake
// DLL (fuzz_msgq_dll.cpp) takes every answer from the input: return codes, messages and
// error strings, communicators of any size, rank and name (with or without a NUL), their
// groups, queue entries with any ranks, tags, lengths, buffers and extra_text lines; and it
// calls the host's callbacks with fuzzed images, types, names, addresses and sizes. The
// host must turn all of it into values or one-line errors (ompdbg::error), never crash,
// hang or allocate without bound.

#include "fake_library.hpp"
#include "memory_image.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/msgq.hpp"

namespace {

using namespace ompdbg;

using fake = fuzz::fake_library<plugins::msgq_library>;

fake& dll() {
    static fake d = fake::load(OMPDBG_FUZZ_MSGQ_DLL, "fuzz_msgq_set_answers");
    return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto& d = dll();
    // The first half feeds the DLL's answers, the second is the target's memory (what
    // mqs_fetch_data and the request reader see).
    std::size_t half = size / 2;
    d.set_answers(data, half);
    fuzz::memory_image image(data + half, size - half);
    try {
        plugins::msgq_process proc(d.lib, image, 3);
        (void)proc.global_rank();
        for (int round = 0; round < 2; ++round) {
            try {
                auto comms = proc.communicators();
                for (const auto& c : comms) {
                    (void)plugins::to_string(c.sends.operations.empty() ? plugins::msgq_status::pending
                                                                        : c.sends.operations.front().status);
                }
            } catch (const error&) {
                // One clear line for the user: the right answer to a DLL that failed.
            }
        }
    } catch (const error&) {
    }
    d.set_answers(nullptr, 0);
    return 0;
}
