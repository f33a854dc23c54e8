// `ompdbg doctor`, MPI: MPIR and MPI2DD in a starter (mpirun) and its libraries, and the
// message-queue DLL of the MPI library with the type information it asks the debugger for.

#include "doctor/doctor_checks.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::debugger::doctor_impl {

namespace {

/// The first of `libs` and the program that defines `symbol`.
std::optional<fs::path> defining_file(const findings& f, std::string_view symbol) {
    if (f.elf && defines(*f.elf, symbol)) {
        return f.program;
    }
    for (const auto& lib : f.libraries) {
        if (lib == f.program) {
            continue;
        }
        // Only libraries that can be MPI starters' or MPI's: reading every libc symbol
        // table for this is cheap enough, but keep it to the likely ones.
        auto name = lib.filename().string();
        if (name.find("mpi") == std::string::npos && name.find("open-rte") == std::string::npos &&
            name.find("open-pal") == std::string::npos && name.find("prrte") == std::string::npos &&
            name.find("pmix") == std::string::npos && name.find("2dd") == std::string::npos) {
            continue;
        }
        if (auto elf = try_open(lib); elf && defines(*elf, symbol)) {
            return lib;
        }
    }
    return std::nullopt;
}

}  // namespace

void check_mpi_starter(findings& f) {
    auto mpir = defining_file(f, "MPIR_Breakpoint");
    auto mpi2dd = defining_file(f, "MPI2DD_info");
    std::optional<fs::path> libmpi;
    for (const auto& lib : f.libraries) {
        if (basename_starts(lib, "libmpi.so")) {
            libmpi = lib;
        }
    }
    if (!mpir && !mpi2dd) {
        if (libmpi) {
            f.add("mpi starter", doctor_status::info,
                  fmt::format("an MPI program (links {}), not a starter: debug the whole job through its starter",
                              libmpi->string()),
                  "ompdbg run -- mpirun -np N PROG ARGS, or ompdbg attach MPIRUN_PID");
        }
        return;
    }
    if (mpi2dd) {
        f.add("mpi starter", doctor_status::ok,
              fmt::format("MPI2DD interface (MPI2DD_info in {}){}", mpi2dd->string(),
                          mpir ? "; MPIR too: ompdbg prefers MPI2DD" : ""));
    }
    if (mpir && !mpi2dd) {
        bool proctable = defining_file(f, "MPIR_proctable").has_value();
        bool being = defining_file(f, "MPIR_being_debugged").has_value();
        if (proctable && being) {
            f.add("mpi starter", doctor_status::ok,
                  fmt::format("MPIR process acquisition (MPIR_Breakpoint, MPIR_proctable, MPIR_being_debugged in {})",
                              mpir->string()));
        } else {
            f.add("mpi starter", doctor_status::missing,
                  fmt::format("MPIR_Breakpoint in {} but not {}", mpir->string(),
                              proctable ? "MPIR_being_debugged" : "MPIR_proctable"),
                  "use an MPI starter that implements the whole MPIR interface (Open MPI's mpirun does)");
        }
    }
}

void check_msgq(findings& f, const plugins::plugin_policy& policy) {
    std::optional<fs::path> libmpi;
    for (const auto& lib : f.libraries) {
        if (basename_starts(lib, "libmpi.so")) {
            libmpi = lib;
        }
    }
    // A starter (mpirun) does not map libmpi; its ranks do. Look next to its libraries.
    if (!libmpi) {
        for (const auto& lib : f.libraries) {
            if (basename_starts(lib, "libopen-rte.so")) {
                for (const auto& e : fs::directory_iterator(lib.parent_path())) {
                    if (basename_starts(e.path(), "libmpi.so.")) {
                        libmpi = e.path();
                        break;
                    }
                }
            }
        }
    }
    if (!libmpi) {
        return;
    }
    // Open MPI installs the DLL in its pkglibdir: <libdir>/openmpi (upstream) or, on
    // Debian, <libdir>/openmpi/lib/openmpi3.
    fs::path dir = libmpi->parent_path();
    fs::path dll = dir / "openmpi" / "libompi_dbg_msgq.so";
    for (const char* sub : {"openmpi", "openmpi/lib/openmpi3", "openmpi3"}) {
        if (fs::path c = dir / sub / "libompi_dbg_msgq.so"; fs::exists(c)) {
            dll = c;
            break;
        }
    }
    if (!fs::exists(dll)) {
        f.add("msgq dll", doctor_status::missing,
              fmt::format("no message-queue DLL ({} does not exist)", dll.string()),
              "install Open MPI's libompi_dbg_msgq.so (it comes with Open MPI's library package)");
    } else if (auto refusal = policy.refusal(dll)) {
        f.add("msgq dll", doctor_status::missing, *refusal, fmt::format("--plugin-path {}", dll.parent_path().string()));
    } else {
        try {
            auto lib = plugins::plugin_library::open(dll, policy);
            if (lib->find("mqs_setup_basic_callbacks") == nullptr || lib->find("mqs_version_compatibility") == nullptr) {
                f.add("msgq dll", doctor_status::missing,
                      fmt::format("{} does not export the message-queue interface (mqs_setup_basic_callbacks)",
                                  dll.string()));
            } else {
                f.add("msgq dll", doctor_status::ok, fmt::format("{} loads and exports the mqs_* interface", dll.string()));
            }
        } catch (const std::exception& e) {
            f.add("msgq dll", doctor_status::missing, e.what());
        }
    }
    // The DLL asks for the layout of Open MPI's internal types; only DWARF has it.
    auto elf = try_open(*libmpi);
    const dwarf::debug_info* dbg = elf ? elf->debug() : nullptr;
    static constexpr const char* needed[] = {"ompi_communicator_t", "ompi_group_t", "ompi_request_t",
                                             "mca_pml_base_request_t", "mca_pml_base_send_request_t",
                                             "mca_pml_base_recv_request_t", "opal_list_t", "ompi_datatype_t"};
    std::string bootstrap_fix =
        fmt::format("use the Open MPI with debug information that scripts/bootstrap builds in {} (its mpicc/mpirun), "
                    "or install Open MPI's debug symbols",
                    (cache_dir() / "openmpi-4.1.4").string());
    if (dbg == nullptr) {
        f.add("msgq types", doctor_status::missing,
              fmt::format("{} has no debug information: the message-queue DLL cannot learn the layout of {}, {}, ... "
                          "(Debian's Open MPI is stripped)",
                          libmpi->string(), needed[0], needed[3]),
              bootstrap_fix);
        return;
    }
    std::vector<std::string> absent;
    for (const char* t : needed) {
        try {
            if (!dbg->find_type(t)) {
                absent.emplace_back(t);
            }
        } catch (const std::exception&) {
            absent.emplace_back(t);
        }
    }
    if (absent.empty()) {
        f.add("msgq types", doctor_status::ok,
              fmt::format("{} has the DWARF types the message-queue DLL asks for", libmpi->string()));
    } else {
        std::string list;
        for (const auto& a : absent) {
            list += (list.empty() ? "" : ", ") + a;
        }
        f.add("msgq types", doctor_status::missing,
              fmt::format("{} has debug information but not the types {}", libmpi->string(), list), bootstrap_fix);
    }
}

}  // namespace ompdbg::debugger::doctor_impl
