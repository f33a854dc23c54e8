// Fuzz target: the MPIR proctable decoder (mpir::interface::proctable) on a memory image
// made by the fuzzer: MPIR_proctable (a pointer) at the image's first byte,
// MPIR_proctable_size (an int) at byte 8, the table and its strings wherever the pointers
// say. Malformed tables must give one ompdbg::error, never a crash or a hang.

#include "memory_image.hpp"

#include "ompdbg/tracer/mpir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ompdbg;
    fuzz::memory_image image(data, size);
    auto iface = tracer::mpir::interface::at(virt_addr(fuzz::memory_image::base),
                                             virt_addr(fuzz::memory_image::base + 8));
    try {
        (void)iface.proctable(image);
    } catch (const error&) {
    }
    return 0;
}
