#pragma once
// DWARF's variable-length integers, read from raw section bytes (the unit filter's own
// abbreviation parser; attribute values libdw has already measured).

#include <cstdint>

namespace ompdbg::dwarf::internal {

/// Reads an unsigned LEB128 at `p` (advanced past it) into `v`; false when it runs past
/// `end` or beyond 64 bits.
inline bool read_uleb(const unsigned char*& p, const unsigned char* end, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        unsigned char b = *p++;
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            return true;
        }
    }
    return false;
}

}  // namespace ompdbg::dwarf::internal
