#pragma once
// Environment switches that turn one of the tracer's speed-ups off, for before/after
// measurements (bench/README.md) and as an escape hatch.

#include <cstdlib>
#include <string_view>

namespace ompdbg::tracer::internal {

/// False when the environment variable `name` is set to `off_value`; true otherwise.
/// Callers cache the answer (the environment is read once per switch).
inline bool env_switch_on(const char* name, std::string_view off_value) {
    const char* v = std::getenv(name);
    return v == nullptr || std::string_view(v) != off_value;
}

}  // namespace ompdbg::tracer::internal
