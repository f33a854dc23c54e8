// The debugger side of MPI2DD: decoding MPI2DD_info and its tables from raw bytes of the
// target, with the offsets of mpi2dd.h, and the run-to-START launch protocol.

#include "ompdbg/tracer/mpi2dd.hpp"

#include <array>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "internal/module_symbols.hpp"
#include "internal/starter_run.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer::mpi2dd {

namespace {

// Little-endian fields of a byte buffer read from the target (x86-64).
template <typename T>
T field(const std::byte* base, std::size_t offset) {
    T v{};
    std::memcpy(&v, base + offset, sizeof v);
    return v;
}

std::string where(target& t) {
    return t.pid() > 0 ? fmt::format("process {}", t.pid()) : std::string("the target");
}

// A NUL-terminated string of the target: read page by page so a string that ends right
// before an unmapped page is read, and one that runs into it is reported as unterminated.
std::string read_string(target& t, std::uint64_t addr, std::string_view what) {
    if (addr == 0) {
        return {};
    }
    std::string out;
    std::array<std::byte, 256> buf{};
    std::uint64_t a = addr;
    while (out.size() < max_string) {
        std::size_t page_left = 4096 - (a & 4095);
        std::size_t want = std::min({buf.size(), page_left, max_string - out.size()});
        std::size_t got = t.try_read_memory(virt_addr(a), std::span(buf.data(), want));
        for (std::size_t i = 0; i < got; ++i) {
            if (buf[i] == std::byte{0}) {
                out.append(reinterpret_cast<const char*>(buf.data()), i);
                return out;
            }
        }
        if (got == 0) {
            if (out.empty()) {
                error::send(fmt::format("MPI2DD {} of {} points to unmapped memory ({:#x}).", what, where(t), addr));
            }
            error::send(fmt::format("MPI2DD {} of {} at {:#x} is not terminated: it runs into unmapped memory at "
                                    "{:#x}.",
                                    what, where(t), addr, a));
        }
        out.append(reinterpret_cast<const char*>(buf.data()), got);
        a += got;
    }
    error::send(fmt::format("MPI2DD {} of {} at {:#x} is not terminated within {} bytes.", what, where(t), addr,
                            max_string));
}

// `count` fixed-size entries at `addr`, read at once.
std::vector<std::byte> read_table(target& t, std::uint64_t addr, std::int32_t count, std::size_t entry,
                                  std::string_view what) {
    if (count < 0) {
        error::send(fmt::format("MPI2DD_info.{}_size of {} is negative ({}).", what, where(t), count));
    }
    if (count > max_table_size) {
        error::send(fmt::format("MPI2DD_info.{}_size of {} is implausible ({} entries; at most {}).", what,
                                where(t), count, max_table_size));
    }
    std::vector<std::byte> bytes(static_cast<std::size_t>(count) * entry);
    if (count == 0) {
        return bytes;
    }
    if (addr == 0) {
        error::send(fmt::format("MPI2DD_info.{} of {} is null but its size is {}.", what, where(t), count));
    }
    if (t.try_read_memory(virt_addr(addr), bytes) != bytes.size()) {
        error::send(fmt::format("MPI2DD_info.{} of {} ({} entries at {:#x}) is not in mapped memory.", what,
                                where(t), count, addr));
    }
    return bytes;
}

std::vector<directory_entry> read_directories(target& t, std::uint64_t addr, std::int32_t count,
                                              std::string_view what) {
    auto bytes = read_table(t, addr, count, MPI2DD_DIRECTORYENTRY_SIZE, what);
    std::vector<directory_entry> out;
    for (std::int32_t i = 0; i < count; ++i) {
        const std::byte* e = bytes.data() + static_cast<std::size_t>(i) * MPI2DD_DIRECTORYENTRY_SIZE;
        directory_entry d;
        std::string label = fmt::format("{} entry {}", what, i);
        d.host_name = read_string(t, field<std::uint64_t>(e, offsetof(MPI2DD_DIRECTORYENTRY, host_name)),
                                  label + " host_name");
        d.executable_name = read_string(
            t, field<std::uint64_t>(e, offsetof(MPI2DD_DIRECTORYENTRY, executable_name)), label + " executable_name");
        d.pid = field<std::int32_t>(e, offsetof(MPI2DD_DIRECTORYENTRY, pid));
        out.push_back(std::move(d));
    }
    return out;
}

// Whether the dynamic loader has loaded the program's libraries (libc is among them).
bool libraries_loaded(target& t) {
    for (const auto& m : t.modules()) {
        if (m.path.filename().string().starts_with("libc.so")) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::string event_name(int debug_state) {
    switch (debug_state) {
    case MPI2DD_DEBUG_START: return "START";
    case MPI2DD_DEBUG_SPAWN: return "SPAWN";
    case MPI2DD_DEBUG_CONNECT: return "CONNECT";
    case MPI2DD_DEBUG_ACCEPT: return "ACCEPT";
    case MPI2DD_DEBUG_JOIN: return "JOIN";
    case MPI2DD_DEBUG_DIRECTORY_CHANGED: return "DIRECTORY_CHANGED";
    case MPI2DD_DEBUG_METADIRECTORY_CHANGED: return "METADIRECTORY_CHANGED";
    case MPI2DD_DEBUG_ABORT: return "ABORT";
    default: return fmt::format("state {}", debug_state);
    }
}

std::string describe_mpi_flags(std::uint32_t flags) {
    static const std::pair<std::uint32_t, const char*> names[] = {
        {MPI2DD_MPIFLAG_I_AM_METADIR, "METADIR"},
        {MPI2DD_MPIFLAG_I_AM_DIR, "DIR"},
        {MPI2DD_MPIFLAG_I_AM_STARTER, "STARTER"},
        {MPI2DD_MPIFLAG_FORCE_TO_MAIN, "FORCE_TO_MAIN"},
        {MPI2DD_MPIFLAG_IGNORE_QUEUE, "IGNORE_QUEUE"},
        {MPI2DD_MPIFLAG_ACQUIRED_PRE_MAIN, "ACQUIRED_PRE_MAIN"},
        {MPI2DD_MPIFLAG_PARTIAL_ATTACH_OK, "PARTIAL_ATTACH_OK"},
    };
    std::string out;
    for (auto [bit, name] : names) {
        if (flags & bit) {
            out += out.empty() ? "" : "|";
            out += name;
        }
    }
    return out.empty() ? "none" : out;
}

std::optional<interface> interface::find(target& t) {
    auto info = internal::find_module_symbol(t, "MPI2DD_info");
    if (!info) {
        return std::nullopt;
    }
    interface i;
    i.info_ = *info;
    i.breakpoint_ = internal::find_module_symbol(t, "MPI2DD_breakpoint");
    return i;
}

interface interface::at(virt_addr info) {
    interface i;
    i.info_ = info;
    return i;
}

info interface::read_header(target& t) const {
    std::array<std::byte, MPI2DD_INFO_SIZE> raw{};
    if (t.try_read_memory(info_, raw) != raw.size()) {
        error::send(fmt::format("MPI2DD_info of {} at {:#x} cannot be read.", where(t), info_.addr()));
    }
    const std::byte* b = raw.data();
    static constexpr std::array<unsigned char, 5> magic = {MPI2DD_MAGIC_0, MPI2DD_MAGIC_1, MPI2DD_MAGIC_2,
                                                           MPI2DD_MAGIC_3, MPI2DD_MAGIC_4};
    if (std::memcmp(b + offsetof(MPI2DD_INFO, magic), magic.data(), magic.size()) != 0) {
        auto m = [&](std::size_t i) { return static_cast<unsigned>(b[i]); };
        error::send(fmt::format("MPI2DD_info of {} has a wrong magic ({:02x} {:02x} {:02x} {:02x} {:02x}; expected "
                                "'M' 'P' 'I' '2' 0x7f): not an MPI2DD interface.",
                                where(t), m(0), m(1), m(2), m(3), m(4)));
    }
    info i;
    i.version = field<std::uint8_t>(b, offsetof(MPI2DD_INFO, version));
    i.variant = field<std::uint8_t>(b, offsetof(MPI2DD_INFO, variant));
    if (i.version != MPI2DD_VERSION) {
        error::send(fmt::format("MPI2DD_info of {} has version {}; ompdbg implements version {}.", where(t),
                                i.version, MPI2DD_VERSION));
    }
    if (i.variant != MPI2DD_VARIANT) {
        error::send(fmt::format("MPI2DD_info of {} has variant {}; ompdbg implements variant {}.", where(t),
                                i.variant, MPI2DD_VARIANT));
    }
    i.debug_state = field<std::uint8_t>(b, offsetof(MPI2DD_INFO, debug_state));
    i.debugger_flags = field<std::uint32_t>(b, offsetof(MPI2DD_INFO, debugger_flags));
    i.mpi_flags = field<std::uint32_t>(b, offsetof(MPI2DD_INFO, mpi_flags));
    i.meta_pid = field<std::int32_t>(b, offsetof(MPI2DD_INFO, meta_pid));
    return i;
}

info interface::read(target& t) const {
    info i = read_header(t);
    std::array<std::byte, MPI2DD_INFO_SIZE> raw{};
    t.read_memory(info_, raw);
    const std::byte* b = raw.data();
    auto addr = [&](std::size_t off) { return field<std::uint64_t>(b, off); };
    i.dll_name_32 = read_string(t, addr(offsetof(MPI2DD_INFO, dll_name_32)), "dll_name_32");
    i.dll_name_64 = read_string(t, addr(offsetof(MPI2DD_INFO, dll_name_64)), "dll_name_64");
    i.meta_host_name = read_string(t, addr(offsetof(MPI2DD_INFO, meta_host_name)), "meta_host_name");
    i.meta_executable_name = read_string(t, addr(offsetof(MPI2DD_INFO, meta_executable_name)),
                                         "meta_executable_name");
    i.abort_string = read_string(t, addr(offsetof(MPI2DD_INFO, abort_string)), "abort_string");

    auto count = field<std::int32_t>(b, offsetof(MPI2DD_INFO, proctable_size));
    auto table = read_table(t, addr(offsetof(MPI2DD_INFO, proctable)), count, MPI2DD_PROCDESC_SIZE, "proctable");
    for (std::int32_t n = 0; n < count; ++n) {
        const std::byte* e = table.data() + static_cast<std::size_t>(n) * MPI2DD_PROCDESC_SIZE;
        std::string label = fmt::format("proctable entry {}", n);
        proc_desc d;
        d.host_name = read_string(t, field<std::uint64_t>(e, offsetof(MPI2DD_PROCDESC, host_name)),
                                  label + " host_name");
        d.executable_name = read_string(t, field<std::uint64_t>(e, offsetof(MPI2DD_PROCDESC, executable_name)),
                                        label + " executable_name");
        d.comm_world_id = read_string(t, field<std::uint64_t>(e, offsetof(MPI2DD_PROCDESC, comm_world_id)),
                                      label + " comm_world_id");
        d.pid = field<std::int32_t>(e, offsetof(MPI2DD_PROCDESC, pid));
        d.rank = field<std::int32_t>(e, offsetof(MPI2DD_PROCDESC, rank));
        if (auto sd = field<std::uint64_t>(e, offsetof(MPI2DD_PROCDESC, spawn_desc)); sd != 0) {
            std::array<std::byte, MPI2DD_SPAWNDESC_SIZE> s{};
            if (t.try_read_memory(virt_addr(sd), s) != s.size()) {
                error::send(fmt::format("MPI2DD {} spawn_desc of {} points to unmapped memory ({:#x}).", label,
                                        where(t), sd));
            }
            spawn_desc sp;
            sp.parent_comm_world_id =
                read_string(t, field<std::uint64_t>(s.data(), offsetof(MPI2DD_SPAWNDESC, parent_comm_world_id)),
                            label + " parent_comm_world_id");
            sp.parent_rank = field<std::int32_t>(s.data(), offsetof(MPI2DD_SPAWNDESC, parent_rank));
            sp.sequence = field<std::int32_t>(s.data(), offsetof(MPI2DD_SPAWNDESC, sequence));
            d.spawn = std::move(sp);
        }
        i.proctable.push_back(std::move(d));
    }
    i.directories = read_directories(t, addr(offsetof(MPI2DD_INFO, directory_table)),
                                     field<std::int32_t>(b, offsetof(MPI2DD_INFO, directory_size)), "directory_table");
    i.metadirectories =
        read_directories(t, addr(offsetof(MPI2DD_INFO, metadirectory_table)),
                         field<std::int32_t>(b, offsetof(MPI2DD_INFO, metadirectory_size)), "metadirectory_table");
    return i;
}

int interface::debug_state(target& t) const {
    std::uint8_t v = 0;
    t.read_memory(info_ + MPI2DD_INFO_OFF_DEBUG_STATE, std::as_writable_bytes(std::span(&v, 1)));
    return v;
}

void interface::set_debugger_flags(target& t, std::uint32_t bits) const {
    std::uint32_t v = 0;
    virt_addr a = info_ + MPI2DD_INFO_OFF_DEBUGGER_FLAGS;
    t.read_memory(a, std::as_writable_bytes(std::span(&v, 1)));
    v |= bits;
    t.write_memory(a, std::as_bytes(std::span(&v, 1)));
}

interface run_to_start(process& starter) {
    std::optional<interface> iface;
    std::string name = starter.executable().filename().string();
    auto try_find = [&] {
        if (iface) {
            return;
        }
        iface = interface::find(starter);
        if (!iface) {
            return;
        }
        // No header check here: a starter may fill MPI2DD_info in main (all zero until
        // then); it is read at START. MPI2DD_info may be the program's copy of a library's
        // variable (a copy relocation) while MPI2DD_breakpoint is still to be loaded.
        if (!iface->breakpoint_address()) {
            iface.reset();
            if (libraries_loaded(starter)) {
                error::send(fmt::format(
                    "{} defines MPI2DD_info but no MPI2DD_breakpoint: it cannot report its job.", name));
            }
            return;
        }
        iface->set_debugger_flags(starter, MPI2DD_FLAG_BEING_DEBUGGED | MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS);
        starter.add_breakpoint_site(*iface->breakpoint_address(), true);
        log::write(log::channel::ptrace, "MPI2DD interface found; MPI2DD_breakpoint at {:#x}",
                   iface->breakpoint_address()->addr());
    };
    internal::run_starter_until_job(
        starter, name, "starting", "start",
        {.find = try_find,
         .forget = [&] { iface.reset(); },
         .at_breakpoint = [&](const stop_reason& why) {
             if (!iface || why.breakpoint_addr != iface->breakpoint_address()) {
                 return false;
             }
             int state = iface->debug_state(starter);
             if (state == MPI2DD_DEBUG_START) {
                 auto header = iface->read_header(starter);
                 if (!header.is_starter() && !header.is_directory() && !header.is_metadirectory()) {
                     error::send(fmt::format("{} raised MPI2DD START, but its mpi_flags ({}) do not make it a "
                                             "starter or a directory.",
                                             name, describe_mpi_flags(header.mpi_flags)));
                 }
                 return true;
             }
             if (state == MPI2DD_DEBUG_ABORT) {
                 auto i = iface->read(starter);
                 error::send(fmt::format("{} aborted the MPI job before it started: {}", name,
                                         i.abort_string.empty() ? "(no abort_string)" : i.abort_string));
             }
             log::write(log::channel::ptrace, "MPI2DD {} before START ignored", event_name(state));
             return false;
         }});
    return *iface;
}

}  // namespace ompdbg::tracer::mpi2dd
