#pragma once
/// One patched address (int3). Sites are owned by their process and shared by the logical
/// breakpoints of the app through a reference count; internal sites (dynamic loader,
/// finish/next step-out) are marked internal and never reported as user breakpoints.

#include <cstdint>

#include "ompdbg/base/addr.hpp"

namespace ompdbg::tracer {

class breakpoint_site {
public:
    using id_type = std::int32_t;
    id_type id() const { return id_; }
    virt_addr address() const { return addr_; }
    bool is_enabled() const { return enabled_; }
    bool is_internal() const { return internal_; }
    /// The original byte under the int3 (valid while enabled).
    std::byte saved_byte() const { return saved_; }

private:
    friend class ptrace_process;
    friend class remote_process;
    breakpoint_site(id_type id, virt_addr addr, bool internal) : id_(id), addr_(addr), internal_(internal) {}
    id_type id_;
    virt_addr addr_;
    bool internal_;
    bool enabled_ = false;
    std::byte saved_{};
    int refcount_ = 0;
};

}  // namespace ompdbg::tracer
