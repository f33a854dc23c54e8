#pragma once
// A fake target for the table decoders' fuzz targets: its memory is the fuzz input mapped
// at `base` (everything else unmapped), it has one thread and no modules. What a decoder
// reads through target::read_memory / try_read_memory is then whatever the fuzzer made.

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/target.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ompdbg::fuzz {

class memory_image final : public tracer::target {
public:
    static constexpr std::uint64_t base = 0x10000;

    memory_image(const std::uint8_t* data, std::size_t size) : bytes_(data, data + size) {}

    pid_t pid() const override { return 4242; }
    bool is_live() const override { return false; }
    std::filesystem::path executable() const override { return "fuzz-image"; }
    void read_memory(virt_addr addr, std::span<std::byte> out) override {
        if (try_read_memory(addr, out) != out.size()) {
            error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr()));
        }
    }
    std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) override {
        std::uint64_t a = addr.addr();
        if (a < base || a - base >= bytes_.size()) {
            return 0;
        }
        std::size_t n = std::min<std::size_t>(out.size(), bytes_.size() - (a - base));
        std::memcpy(out.data(), bytes_.data() + (a - base), n);
        return n;
    }
    void write_memory(virt_addr addr, std::span<const std::byte>) override {
        error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr()));
    }
    std::vector<tracer::thread*> threads() override { return {}; }
    tracer::thread* find_thread(pid_t) override { return nullptr; }
    const std::vector<tracer::loaded_module>& modules() override { return modules_; }

private:
    std::vector<std::uint8_t> bytes_;
    std::vector<tracer::loaded_module> modules_;
};

}  // namespace ompdbg::fuzz
