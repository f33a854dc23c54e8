#pragma once
/// gomp_team_reader: each thread's number, team size and nesting level in libgomp, read
/// from libgomp's own per-thread data through the code of its exported accessors (libgomp
/// has no OMPD and Debian strips its debug information).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

/// Each thread's place in its team, read from libgomp's own per-thread data without its
/// debug information. libgomp keeps a thread's state in the TLS variable gomp_tls_data
/// (struct gomp_thread: ts.team, ts.team_id, ts.level; team->nthreads first in struct
/// gomp_team), and its exported accessors read exactly those fields:
///   omp_get_thread_num:  [endbr64] mov GOT(%rip),%rax ; mov %fs:TEAM_ID(%rax),%eax ; ret
///   omp_get_level:       [endbr64] mov GOT(%rip),%rax ; mov %fs:LEVEL(%rax),%eax ; ret
///   omp_get_num_threads: [endbr64] mov GOT(%rip),%rax ; mov %fs:TEAM(%rax),%rdx ;
///                        mov $1,%eax ; test %rdx,%rdx ; je 1f ; mov (%rdx),%eax ; 1: ret
/// (GOT holds gomp_tls_data's offset from the thread pointer: initial-exec TLS). So the
/// offsets are taken from the loaded library's code, never assumed: gcc 12's libgomp
/// (Debian 12) gives TEAM 0x10, TEAM_ID 0x28, LEVEL 0x2c, as its struct gomp_team_state
/// says. When the code has another shape, nothing is read and the limits say so.
class gomp_team_reader {
public:
    struct place {
        std::int64_t thread_num = 0, team_size = 1, level = 0;
    };

    /// Reads the accessors of libgomp module `m` of `tgt` (which must outlive the reader).
    explicit gomp_team_reader(tracer::target& tgt, const tracer::loaded_module& m);

    /// Thread `tid`'s number, team size and nesting level as libgomp keeps them; nullopt when
    /// it is not in a team (idle in the pool, or no OpenMP yet) or cannot be read.
    std::optional<place> of(pid_t tid) const;

    /// Why nothing can be read ("" when the reader works).
    const std::string& problem() const { return problem_; }

private:
    tracer::target& tgt_;
    std::optional<std::uint64_t> got_;
    std::uint8_t team_id_at_ = 0, level_at_ = 0, team_at_ = 0;
    std::string problem_;
};

}  // namespace ompdbg::debugger
