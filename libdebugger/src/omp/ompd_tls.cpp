#include "omp/ompd_tls.hpp"

namespace ompdbg::debugger {

plugins::tls_resolver make_tls_resolver(std::function<tracer::thread_db*()> get) {
    return [get = std::move(get)](pid_t tid, const tracer::loaded_module& m,
                                  std::uint64_t off) -> std::optional<std::uint64_t> {
        try {
            if (tracer::thread_db* tdb = get()) {
                return tdb->tls_address(tid, m, off);
            }
        } catch (const std::exception&) {
        }
        return std::nullopt;
    };
}

}  // namespace ompdbg::debugger
