#pragma once
// The handles and contexts the host gave a plugin and that are still valid. A plugin hands
// them back through the callbacks, and a buggy one may pass garbage: the callbacks look a
// pointer up here, by address only, before they dereference it. Shared by the OMPD, DMPL
// and message-queue hosts (each keeps one registry).

#include <mutex>
#include <set>

namespace ompdbg::plugins::internal {

class live_registry {
public:
    /// The lock that guards the set and whatever the host keeps with its handles; hold it
    /// with `std::lock_guard lock(reg.mutex())` around for_each / the host's own data.
    std::mutex& mutex() { return mutex_; }

    void insert(const void* p) {
        std::lock_guard lock(mutex_);
        live_.insert(p);
    }
    void erase(const void* p) {
        std::lock_guard lock(mutex_);
        live_.erase(p);
    }
    /// True when `p` was inserted and not erased since.
    bool contains(const void* p) {
        std::lock_guard lock(mutex_);
        return p != nullptr && live_.count(p) != 0;
    }
    /// The live pointers; only with mutex() held.
    const std::set<const void*>& locked_items() const { return live_; }
    /// insert/erase/contains with mutex() already held.
    void locked_insert(const void* p) { live_.insert(p); }
    void locked_erase(const void* p) { live_.erase(p); }
    bool locked_contains(const void* p) const { return p != nullptr && live_.count(p) != 0; }

private:
    std::mutex mutex_;
    std::set<const void*> live_;
};

}  // namespace ompdbg::plugins::internal
