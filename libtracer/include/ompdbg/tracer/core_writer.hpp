#pragma once
/// Writing an ELF core file of a stopped live process (gdb's `generate-core-file`/`gcore`):
/// what the kernel writes on a crash, readable by core_file and by gdb.

#include <sys/types.h>

#include <filesystem>

namespace ompdbg::tracer {

class process;

/// Writes the image of the stopped process `p` to `path`: one NT_PRSTATUS + NT_FPREGSET +
/// NT_X86_XSTATE (the XSAVE area: ymm, zmm and mask registers for gdb) per thread (`first_tid` first: the thread gdb and core_file show as the one that dumped),
/// NT_PRPSINFO, NT_SIGINFO of `first_tid`'s last signal, NT_AUXV and NT_FILE from /proc, and
/// one PT_LOAD per mapping of /proc/PID/maps. Data mappings are copied whole (read-only
/// ones too: RELRO data was relocated before it was protected); code mappings of files only
/// their first page when it holds an ELF header (as the kernel's default coredump_filter):
/// readers take the code from the files NT_FILE names.
/// `signo` becomes pr_cursig (0: none). The process is left as it was. Throws "Failed to
/// open 'PATH' for output." or "Failed to write core file 'PATH': <reason>".
void write_core_file(process& p, const std::filesystem::path& path, pid_t first_tid, int signo);

}  // namespace ompdbg::tracer
