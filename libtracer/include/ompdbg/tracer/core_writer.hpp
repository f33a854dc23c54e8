#pragma once
/// Writes an ELF core file of a stopped live process (gdb's gcore): one PT_NOTE with
/// NT_PRPSINFO, per thread NT_PRSTATUS + NT_FPREGSET, NT_AUXV and NT_FILE; one PT_LOAD per
/// mapping of /proc/PID/maps, with the bytes of every readable mapping that is writable,
/// anonymous or the first page of a file (the rest is read back from the files, as
/// core_file does for kernel cores).

#include <filesystem>

#include "ompdbg/tracer/process.hpp"

namespace ompdbg::tracer {

/// Writes the core of `p` (all threads stopped) to `path`. Throws on I/O errors
/// ("PATH: <strerror>"), leaving no partial file behind.
void write_core_file(process& p, const std::filesystem::path& path);

}  // namespace ompdbg::tracer
