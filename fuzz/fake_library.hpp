#pragma once
// A fake plugin library of fuzz/ loaded through its real host (dmpl_library, ompd_library,
// msgq_library ::load, under a policy that trusts its directory), with the library's
// set-answers function (fuzz_answers.h) found by name: the fuzz target feeds it the input.

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ompdbg/plugins/plugin_library.hpp"

namespace ompdbg::fuzz {

template <typename Library>
struct fake_library {
    std::shared_ptr<Library> lib;
    void (*set_answers)(const std::uint8_t*, std::size_t) = nullptr;

    /// Loads `file` once per fuzz process; aborts when the set-up itself is broken.
    static fake_library load(const std::filesystem::path& file, const char* setter) {
        fake_library f;
        plugins::plugin_policy policy;
        policy.allow_directory(file.parent_path());
        f.lib = Library::load(file, policy);
        void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
        f.set_answers = reinterpret_cast<void (*)(const std::uint8_t*, std::size_t)>(h ? ::dlsym(h, setter) : nullptr);
        if (f.set_answers == nullptr) {
            std::abort();
        }
        return f;
    }
};

}  // namespace ompdbg::fuzz
