// Fuzz target: what the message-queue host does with a message-queue DLL's answers. A fake
// DLL (fuzz_msgq_dll.cpp) takes every answer from the input: return codes, messages and
// error strings, communicators of any size, rank and name (with or without a NUL), their
// groups, queue entries with any ranks, tags, lengths, buffers and extra_text lines; and it
// calls the host's callbacks with fuzzed images, types, names, addresses and sizes. The
// host must turn all of it into values or one-line errors (ompdbg::error), never crash,
// hang or allocate without bound.

#include "memory_image.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/msgq.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace {

using namespace ompdbg;

struct fuzz_dll {
    std::shared_ptr<plugins::msgq_library> lib;
    void (*set_answers)(const std::uint8_t*, std::size_t) = nullptr;
};

fuzz_dll& dll() {
    static fuzz_dll d = [] {
        fuzz_dll f;
        std::filesystem::path file = OMPDBG_FUZZ_MSGQ_DLL;
        plugins::plugin_policy policy;
        policy.allow_directory(file.parent_path());
        f.lib = plugins::msgq_library::load(file, policy);
        void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
        f.set_answers = reinterpret_cast<void (*)(const std::uint8_t*, std::size_t)>(
            h ? ::dlsym(h, "fuzz_msgq_set_answers") : nullptr);
        if (f.set_answers == nullptr) {
            std::abort();   // the fuzz setup itself is broken
        }
        return f;
    }();
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
