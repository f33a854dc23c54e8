// The MPIR process-acquisition interface (MPI Forum, "The MPIR Process Acquisition
// Interface", 2010): symbol lookup in the starter's modules and the spawn protocol.

#include "ompdbg/tracer/mpir.hpp"

#include "internal/module_symbols.hpp"
#include "internal/starter_run.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <array>
#include <cstring>

namespace ompdbg::tracer::mpir {

namespace {

std::optional<virt_addr> find_symbol(target& t, std::string_view name) {
    return internal::find_module_symbol(t, name);
}

template <typename T>
T read_scalar(target& t, virt_addr a) {
    T v{};
    t.read_memory(a, std::span<std::byte>(reinterpret_cast<std::byte*>(&v), sizeof v));
    return v;
}

// A C string of the target, read in chunks up to `max` bytes.
std::string read_c_string(target& t, virt_addr a, std::size_t max = 4096) {
    std::string out;
    std::array<std::byte, 256> buf{};
    while (out.size() < max) {
        std::size_t n = t.try_read_memory(virt_addr(a.addr() + out.size()), buf);
        if (n == 0) {
            error::send(fmt::format("Cannot access memory at address {:#x}", a.addr() + out.size()));
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (buf[i] == std::byte{0}) {
                return out;
            }
            out.push_back(static_cast<char>(buf[i]));
        }
    }
    return out;
}

// struct MPIR_PROCDESC { char *host_name; char *executable_name; int pid; } on x86-64.
constexpr std::uint64_t entry_size = 24;
constexpr std::uint64_t exe_offset = 8;
constexpr std::uint64_t pid_offset = 16;
constexpr std::int32_t max_plausible_size = 1'000'000;

bool has_libc(target& t) {
    for (const auto& m : t.modules()) {
        if (m.path.filename().string().starts_with("libc.so")) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::optional<interface> interface::find(target& starter) {
    auto bp = find_symbol(starter, "MPIR_Breakpoint");
    auto table = find_symbol(starter, "MPIR_proctable");
    auto size = find_symbol(starter, "MPIR_proctable_size");
    auto state = find_symbol(starter, "MPIR_debug_state");
    auto being = find_symbol(starter, "MPIR_being_debugged");
    if (!bp || !table || !size || !state || !being) {
        return std::nullopt;
    }
    interface i;
    i.breakpoint_ = *bp;
    i.proctable_ = *table;
    i.proctable_size_ = *size;
    i.debug_state_ = *state;
    i.being_debugged_ = *being;
    return i;
}

interface interface::at(virt_addr proctable, virt_addr proctable_size) {
    interface i;
    i.proctable_ = proctable;
    i.proctable_size_ = proctable_size;
    return i;
}

void interface::set_being_debugged(target& starter, bool on) const {
    std::int32_t v = on ? 1 : 0;
    starter.write_memory(being_debugged_, std::span<const std::byte>(reinterpret_cast<const std::byte*>(&v), sizeof v));
}

int interface::debug_state(target& starter) const {
    return read_scalar<std::int32_t>(starter, debug_state_);
}

std::vector<proc_desc> interface::proctable(target& starter) const {
    auto size = read_scalar<std::int32_t>(starter, proctable_size_);
    auto table = read_scalar<std::uint64_t>(starter, proctable_);
    if (size <= 0 || table == 0) {
        error::send("The MPI starter has no process table (MPIR_proctable is empty): the job was not spawned yet.");
    }
    if (size > max_plausible_size) {
        error::send(fmt::format("MPIR_proctable_size is implausible ({}).", size));
    }
    std::vector<proc_desc> out;
    out.reserve(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) {
        virt_addr e(table + static_cast<std::uint64_t>(i) * entry_size);
        proc_desc d;
        d.rank = i;
        auto host = read_scalar<std::uint64_t>(starter, e);
        auto exe = read_scalar<std::uint64_t>(starter, virt_addr(e.addr() + exe_offset));
        d.pid = read_scalar<std::int32_t>(starter, virt_addr(e.addr() + pid_offset));
        d.host_name = host ? read_c_string(starter, virt_addr(host)) : std::string();
        d.executable_name = exe ? read_c_string(starter, virt_addr(exe)) : std::string();
        if (d.pid <= 0) {
            error::send(fmt::format("MPIR_proctable entry {} has no pid ({}).", i, d.pid));
        }
        out.push_back(std::move(d));
    }
    return out;
}

proctable_progress interface::progress(target& starter) const {
    proctable_progress p;
    try {
        auto size = read_scalar<std::int32_t>(starter, proctable_size_);
        auto table = read_scalar<std::uint64_t>(starter, proctable_);
        if (size <= 0 || size > max_plausible_size || table == 0) {
            return p;
        }
        // The whole table in one read: this runs every few milliseconds while a starter
        // starts its tasks.
        std::vector<std::byte> bytes(static_cast<std::size_t>(size) * entry_size);
        starter.read_memory(virt_addr(table), bytes);
        p.size = size;
        for (int i = 0; i < size; ++i) {
            // srun writes the executable names only once every task has answered.
            std::int32_t pid = 0;
            std::uint64_t exe = 0;
            const std::byte* e = bytes.data() + static_cast<std::uint64_t>(i) * entry_size;
            std::memcpy(&pid, e + pid_offset, sizeof pid);
            std::memcpy(&exe, e + exe_offset, sizeof exe);
            p.with_pid += pid > 0 && exe != 0 ? 1 : 0;
        }
    } catch (const std::exception&) {
        return proctable_progress{};   // unreadable: no table yet as far as we can tell
    }
    return p;
}

interface run_to_spawn(process& starter) {
    std::optional<interface> iface;
    std::string name = starter.executable().filename().string();
    auto try_find = [&] {
        if (iface) {
            return;
        }
        iface = interface::find(starter);
        if (iface) {
            iface->set_being_debugged(starter, true);
            starter.add_breakpoint_site(iface->breakpoint_address(), true);
            log::write(log::channel::ptrace, "MPIR interface found; MPIR_Breakpoint at {:#x}",
                       iface->breakpoint_address().addr());
        } else if (has_libc(starter)) {
            error::send(fmt::format("{} is not an MPI starter: it has no MPIR_Breakpoint/MPIR_proctable.", name));
        }
    };
    internal::run_starter_until_job(
        starter, name, "spawning", "spawn",
        {.find = try_find,
         .forget = [&] { iface.reset(); },
         .at_breakpoint = [&](const stop_reason& why) {
             if (!iface || why.breakpoint_addr != iface->breakpoint_address()) {
                 return false;
             }
             int state = iface->debug_state(starter);
             if (state == debug_aborting) {
                 error::send(fmt::format("{} is aborting the MPI job (MPIR_debug_state = MPIR_DEBUG_ABORTING).", name));
             }
             return state == debug_spawned;
         }});
    return *iface;
}

}  // namespace ompdbg::tracer::mpir
