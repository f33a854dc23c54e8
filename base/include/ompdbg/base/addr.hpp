#pragma once
/// Typed addresses (sdb): virt_addr is an address in a target's address space. Addresses
/// in an ELF file (link-time addresses) are plain std::uint64_t inside libdwarfview; the
/// load bias is applied in one place, tracer::loaded_module.

#include <compare>
#include <cstdint>
#include <functional>

namespace ompdbg {

class virt_addr {
public:
    constexpr virt_addr() = default;
    constexpr explicit virt_addr(std::uint64_t addr) : addr_(addr) {}

    constexpr std::uint64_t addr() const { return addr_; }

    constexpr virt_addr operator+(std::int64_t off) const { return virt_addr(addr_ + off); }
    constexpr virt_addr operator-(std::int64_t off) const { return virt_addr(addr_ - off); }
    constexpr virt_addr& operator+=(std::int64_t off) { addr_ += off; return *this; }
    constexpr virt_addr& operator-=(std::int64_t off) { addr_ -= off; return *this; }
    constexpr std::int64_t operator-(virt_addr other) const {
        return static_cast<std::int64_t>(addr_ - other.addr_);
    }
    constexpr auto operator<=>(const virt_addr&) const = default;

private:
    std::uint64_t addr_ = 0;
};

}  // namespace ompdbg

template <>
struct std::hash<ompdbg::virt_addr> {
    std::size_t operator()(ompdbg::virt_addr a) const noexcept {
        return std::hash<std::uint64_t>{}(a.addr());
    }
};
