#include "ompdbg/tracer/core_writer.hpp"

#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer {

void write_core_file(process&, const std::filesystem::path&) {
    error::send("generate-core-file: not implemented yet");
}

}  // namespace ompdbg::tracer
