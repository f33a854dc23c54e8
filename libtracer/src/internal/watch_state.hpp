#pragma once
// The watchpoints of one process (see watchpoints.cpp): what is watched, which debug
// register holds which, and the protections of the pages software watchpoints guard.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ompdbg/tracer/watchpoint.hpp"

namespace ompdbg::tracer::internal {

struct watch_entry {
    int id = 0;
    std::uint64_t addr = 0;
    std::size_t size = 0;
    watch_kind kind = watch_kind::write;
    watch_mode mode = watch_mode::software;
    int slot = -1;   ///< hardware: DR0..DR3
};

struct watch_state {
    std::vector<watch_entry> entries;
    int next_id = 1;
    /// Hardware slots: the watchpoint id in DR0..DR3 (nullopt: free).
    std::array<std::optional<int>, hardware_watch_slots> slots;
    /// Software: the protection each guarded page had before we changed it.
    std::map<std::uint64_t, int> original_prot;
    /// Software: the protection we gave each guarded page.
    std::map<std::uint64_t, int> guarded_prot;
    /// The address of a `syscall` instruction (bytes 0f 05) in the target's code: injected
    /// system calls run there, so no code is patched under other running threads.
    std::optional<std::uint64_t> syscall_gadget;
    /// Faults handled (for logs and the speed tests).
    std::uint64_t faults = 0;

    bool has_hardware() const {
        for (const auto& s : slots) {
            if (s) {
                return true;
            }
        }
        return false;
    }
};

}  // namespace ompdbg::tracer::internal
