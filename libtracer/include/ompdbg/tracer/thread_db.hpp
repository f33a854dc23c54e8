#pragma once
/// glibc's libthread_db with our own proc_service callbacks (ps_pdread, ps_pglobal_lookup,
/// ps_lgetregs, ...): TLS addresses, pthread_t of a thread, pthread key values. Works on
/// any `target` (live or core).

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer {

class thread_db {
public:
    /// nullptr when libthread_db cannot handle this target (not linked with libpthread /
    /// libc's nptl symbols not found); the reason is in `why`.
    static std::unique_ptr<thread_db> open(target& tgt, std::string* why = nullptr);
    ~thread_db();

    /// Run-time address of `offset` in the TLS block of `module` for thread `tid`;
    /// throws with a gdb-like message ("Cannot find thread-local storage for ...").
    std::uint64_t tls_address(pid_t tid, const loaded_module& module, std::uint64_t offset);
    /// pthread_t (the thread's struct pthread address) of `tid`.
    std::optional<std::uint64_t> pthread_self(pid_t tid);
    /// Value of pthread key `key` in thread `tid` (td_thr_tsd).
    std::optional<std::uint64_t> tsd(pid_t tid, unsigned key);

private:
    thread_db();
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::tracer
