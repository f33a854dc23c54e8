// Fuzz target: the MPI2DD_info decoder (mpi2dd::interface::read: header, strings,
// proctable, spawn descriptors, directory and metadirectory tables) on a memory image
// made by the fuzzer, MPI2DD_info at its first byte. Malformed structures must give one
// ompdbg::error, never a crash or a hang.

#include "memory_image.hpp"

#include "ompdbg/tracer/mpi2dd.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ompdbg;
    fuzz::memory_image image(data, size);
    auto iface = tracer::mpi2dd::interface::at(virt_addr(fuzz::memory_image::base));
    try {
        auto info = iface.read(image);
        (void)tracer::mpi2dd::describe_mpi_flags(info.mpi_flags);
        (void)tracer::mpi2dd::event_name(info.debug_state);
    } catch (const error&) {
    }
    return 0;
}
