#pragma once
// The TLS resolver the OMPD host needs (__kmp_gtid and the like): libthread_db's answer
// for a thread's TLS block. Shared by `require_ompd` (ompd_state.cpp) and `ompdbg
// doctor`'s live OMPD query. Not a public header: a plugin host type.

#include <functional>

#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::debugger {

/// A resolver that asks the libthread_db `get()` returns at each call (nullptr: none, or
/// not opened yet); nullopt when there is none or it fails, and the host then walks glibc's
/// DTV itself. `get` must stay callable as long as the resolver is used.
plugins::tls_resolver make_tls_resolver(std::function<tracer::thread_db*()> get);

}  // namespace ompdbg::debugger
