// gomp_team_reader (ompdbg/debugger/omp/gomp_team_reader.hpp): the decoding of libgomp's
// exported accessors and the reads of a thread's team state through them.

#include "ompdbg/debugger/omp/gomp_team_reader.hpp"

#include <cstddef>
#include <cstring>
#include <span>

namespace ompdbg::debugger {

namespace {

/// Where one accessor reads: the GOT slot holding gomp_tls_data's offset from the thread
/// pointer, and the field's offset in it.
struct tls_load {
    std::uint64_t got = 0;
    std::uint8_t offset = 0;
};

template <typename T>
std::optional<T> read(tracer::target& tgt, std::uint64_t addr) {
    T v{};
    if (tgt.try_read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1))) != sizeof v) {
        return std::nullopt;
    }
    return v;
}

/// Decodes one accessor (see gomp_team_reader); `team`: omp_get_num_threads's shape.
std::optional<tls_load> accessor(tracer::target& tgt, const tracer::loaded_module& m, const char* name, bool team) {
    auto syms = m.elf->find_symbols(name);
    if (syms.empty()) {
        return std::nullopt;
    }
    std::uint64_t at = m.to_runtime(syms.front().value).addr();
    std::uint8_t code[32] = {};
    if (tgt.try_read_memory(virt_addr(at), std::as_writable_bytes(std::span(code))) != sizeof code) {
        return std::nullopt;
    }
    std::size_t i = 0;
    if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) {
        i = 4;   // endbr64
    }
    if (code[i] != 0x48 || code[i + 1] != 0x8b || code[i + 2] != 0x05) {
        return std::nullopt;   // mov disp32(%rip),%rax
    }
    std::int32_t disp = 0;
    std::memcpy(&disp, code + i + 3, 4);
    tls_load out;
    out.got = at + i + 7 + static_cast<std::uint64_t>(static_cast<std::int64_t>(disp));
    i += 7;
    if (code[i] != 0x64) {
        return std::nullopt;   // %fs:
    }
    ++i;
    if (team) {
        // mov %fs:d8(%rax),%rdx ; mov $1,%eax ; test %rdx,%rdx ; je +2 ; mov (%rdx),%eax
        static const std::uint8_t tail[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0x48, 0x85, 0xd2, 0x74, 0x02, 0x8b, 0x02};
        if (code[i] != 0x48 || code[i + 1] != 0x8b || code[i + 2] != 0x50 ||
            std::memcmp(code + i + 4, tail, sizeof tail) != 0) {
            return std::nullopt;
        }
        out.offset = code[i + 3];
    } else {
        // mov %fs:d8(%rax),%eax ; ret
        if (code[i] != 0x8b || code[i + 1] != 0x40 || code[i + 3] != 0xc3) {
            return std::nullopt;
        }
        out.offset = code[i + 2];
    }
    return out;
}

}  // namespace

gomp_team_reader::gomp_team_reader(tracer::target& tgt, const tracer::loaded_module& m) : tgt_(tgt) {
    auto thread_num = accessor(tgt, m, "omp_get_thread_num", false);
    auto level = accessor(tgt, m, "omp_get_level", false);
    auto team = accessor(tgt, m, "omp_get_num_threads", true);
    if (!thread_num || !level || !team || thread_num->got != level->got || thread_num->got != team->got) {
        problem_ = "the code of " + m.path.filename().string() +
                   "'s omp_get_thread_num/omp_get_level/omp_get_num_threads is not the shape ompdbg reads "
                   "libgomp's thread data by";
        return;
    }
    got_ = thread_num->got;
    team_id_at_ = thread_num->offset;
    level_at_ = level->offset;
    team_at_ = team->offset;
}

std::optional<gomp_team_reader::place> gomp_team_reader::of(pid_t tid) const {
    tracer::thread* th = tgt_.find_thread(tid);
    if (!got_ || th == nullptr) {
        return std::nullopt;
    }
    auto tp_offset = read<std::int64_t>(tgt_, *got_);
    if (!tp_offset) {
        return std::nullopt;
    }
    std::uint64_t data = th->regs().gp().fs_base + static_cast<std::uint64_t>(*tp_offset);
    auto team = read<std::uint64_t>(tgt_, data + team_at_);
    auto id = read<std::uint32_t>(tgt_, data + team_id_at_);
    auto level = read<std::uint32_t>(tgt_, data + level_at_);
    if (!team || *team == 0 || !id || !level) {
        return std::nullopt;
    }
    auto nthreads = read<std::uint32_t>(tgt_, *team);
    if (!nthreads || *nthreads == 0 || *id >= *nthreads) {
        return std::nullopt;
    }
    return place{*id, *nthreads, *level};
}

}  // namespace ompdbg::debugger
