// OpenMP through DMPL (issue 5): choosing and loading the DMPL library of the target's
// OpenMP runtime, and the commands that use it. The plugins-host DMPL host does the talking
// to the library; this file decides what the user sees.

#include "commands_dmpl.hpp"
#include "command_args.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commands_omp.hpp"
#include "frame_context.hpp"
#include "omp_stack_view.hpp"
#include "ompdbg/debugger/omp/outlined_code.hpp"
#include "session.hpp"
#include "stack.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/thread_db.hpp"

#ifndef OMPDBG_DMPL_PLUGIN_DIR
#define OMPDBG_DMPL_PLUGIN_DIR ""
#endif

namespace ompdbg::app {

namespace fs = std::filesystem;

namespace {

enum class runtime_kind { none, libomp, libgomp };

struct runtime_info {
    runtime_kind kind = runtime_kind::none;
    const tracer::loaded_module* module = nullptr;
};

/// DMPL state of one session (`session::model_state()`): the setting and the loaded
/// library.
struct dmpl_library_state {
    std::optional<fs::path> library_setting;
    std::shared_ptr<plugins::dmpl_library> library;
};

/// DMPL state of one process (`inferior::model_state`): the library's view of its target
/// (rebuilt when the target changes), and an OMPD view for thread numbers.
struct dmpl_process_state {
    std::unique_ptr<plugins::dmpl_process> proc;
    const tracer::target* proc_target = nullptr;
    pid_t proc_pid = 0;
    std::unique_ptr<plugins::ompd_address_space> ompd;
    const tracer::target* ompd_target = nullptr;
    pid_t ompd_pid = 0;
};

dmpl_library_state& library_state(session& s) {
    return s.model_state().get<dmpl_library_state>();
}

/// The state of the current inferior's process.
dmpl_process_state& process_state(session& s) {
    return s.current_inferior().model_state.get<dmpl_process_state>();
}

runtime_info find_runtime(tracer::target& tgt) {
    runtime_info r;
    for (const auto& m : tgt.modules()) {
        std::string f = m.path.filename().string();
        if (f.starts_with("libomp.so") || f.starts_with("libiomp5")) {
            return {runtime_kind::libomp, &m};
        }
        if (f.starts_with("libgomp.so")) {
            return {runtime_kind::libgomp, &m};
        }
    }
    return r;
}

fs::path default_library(runtime_kind k) {
    fs::path dir(OMPDBG_DMPL_PLUGIN_DIR);
    return dir / (k == runtime_kind::libgomp ? "libdmpl-libgomp.so" : "libdmpl-libomp.so");
}

/// The DMPL view of the session's target, created on first use; nullptr when the target has
/// no OpenMP runtime (`required`: throw instead). Throws one line when the library cannot
/// be loaded.
plugins::dmpl_process* dmpl_for(session& s, bool required) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        if (required) {
            error::send("The program is not being run.");
        }
        return nullptr;
    }
    dmpl_process_state& st = process_state(s);
    if (st.proc && st.proc_target == tgt && st.proc_pid == tgt->pid()) {
        st.proc->forget_exited_threads();
        return st.proc.get();
    }
    st.proc.reset();
    runtime_info rt = find_runtime(*tgt);
    if (rt.kind == runtime_kind::none) {
        if (required) {
            error::send("no OpenMP runtime is loaded in the program (yet)");
        }
        return nullptr;
    }
    dmpl_library_state& lib = library_state(s);
    if (!lib.library) {
        fs::path file = lib.library_setting ? *lib.library_setting : default_library(rt.kind);
        lib.library = plugins::dmpl_library::load(file, s.plugin_policy());
    }
    plugins::pthread_key_reader keys = [&s](pid_t tid, std::uint64_t key) -> std::optional<std::uint64_t> {
        try {
            if (tracer::thread_db* tdb = s.thread_db()) {
                return tdb->tsd(tid, static_cast<unsigned>(key));
            }
        } catch (const std::exception& e) {
            log::write(log::channel::plugin, "td_thr_tsd: {}", e.what());
        }
        return std::nullopt;
    };
    st.proc = std::make_unique<plugins::dmpl_process>(lib.library, *tgt, std::move(keys));
    st.proc_target = tgt;
    st.proc_pid = tgt->pid();
    return st.proc.get();
}

/// As dmpl_for, but a library that cannot be loaded is logged and gives nullptr (for views
/// that work without DMPL).
plugins::dmpl_process* dmpl_quiet(session& s) {
    try {
        return dmpl_for(s, false);
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "DMPL: {}", e.what());
        return nullptr;
    }
}

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

    explicit gomp_team_reader(tracer::target& tgt, const tracer::loaded_module& m) : tgt_(tgt) {
        auto thread_num = accessor(m, "omp_get_thread_num", false);
        auto level = accessor(m, "omp_get_level", false);
        auto team = accessor(m, "omp_get_num_threads", true);
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

    /// Thread `tid`'s number, team size and nesting level as libgomp keeps them; nullopt when
    /// it is not in a team (idle in the pool, or no OpenMP yet) or cannot be read.
    std::optional<place> of(pid_t tid) const {
        tracer::thread* th = tgt_.find_thread(tid);
        if (!got_ || th == nullptr) {
            return std::nullopt;
        }
        auto tp_offset = read<std::int64_t>(*got_);
        if (!tp_offset) {
            return std::nullopt;
        }
        std::uint64_t data = th->regs().gp().fs_base + static_cast<std::uint64_t>(*tp_offset);
        auto team = read<std::uint64_t>(data + team_at_);
        auto id = read<std::uint32_t>(data + team_id_at_);
        auto level = read<std::uint32_t>(data + level_at_);
        if (!team || *team == 0 || !id || !level) {
            return std::nullopt;
        }
        auto nthreads = read<std::uint32_t>(*team);
        if (!nthreads || *nthreads == 0 || *id >= *nthreads) {
            return std::nullopt;
        }
        return place{*id, *nthreads, *level};
    }

    /// Why nothing can be read ("" when the reader works).
    const std::string& problem() const { return problem_; }

private:
    struct tls_load {
        std::uint64_t got = 0;
        std::uint8_t offset = 0;
    };

    template <typename T>
    std::optional<T> read(std::uint64_t addr) const {
        T v{};
        if (tgt_.try_read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1))) != sizeof v) {
            return std::nullopt;
        }
        return v;
    }

    /// Decodes one accessor (see the class comment); `team`: omp_get_num_threads's shape.
    std::optional<tls_load> accessor(const tracer::loaded_module& m, const char* name, bool team) const {
        auto syms = m.elf->find_symbols(name);
        if (syms.empty()) {
            return std::nullopt;
        }
        std::uint64_t at = m.to_runtime(syms.front().value).addr();
        std::uint8_t code[32] = {};
        if (tgt_.try_read_memory(virt_addr(at), std::as_writable_bytes(std::span(code))) != sizeof code) {
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

    tracer::target& tgt_;
    std::optional<std::uint64_t> got_;
    std::uint8_t team_id_at_ = 0, level_at_ = 0, team_at_ = 0;
    std::string problem_;
};

/// OpenMP thread number and team size of `tid` in its innermost region, or `levels_out`
/// regions outward of it: through OMPD (libomp with OMP_DEBUG; an enclosing region's number
/// is the member index whose thread is this one), or for the innermost region from
/// libgomp's own per-thread data (gomp_team_reader); nullopt when neither can tell.
std::optional<std::pair<std::int64_t, std::int64_t>> omp_position(session& s, pid_t tid, int levels_out = 0) {
    try {
        tracer::target* tgt = s.target();
        if (tgt == nullptr) {
            return std::nullopt;
        }
        if (runtime_info rt = find_runtime(*tgt); rt.kind == runtime_kind::libgomp && rt.module != nullptr) {
            if (levels_out > 0) {
                return std::nullopt;   // libgomp's enclosing team states are beyond its exported code
            }
            if (auto place = gomp_team_reader(*tgt, *rt.module).of(tid)) {
                return std::make_pair(place->thread_num, place->team_size);
            }
            return std::nullopt;
        }
        dmpl_process_state& st = process_state(s);
        if (!st.ompd || st.ompd_target != tgt || st.ompd_pid != tgt->pid()) {
            st.ompd.reset();
            auto probe = plugins::probe_openmp_runtime(*tgt);
            if (probe.what != plugins::omp_runtime_probe::kind::llvm_ompd || !probe.debug_enabled) {
                return std::nullopt;
            }
            auto lib = plugins::load_ompd_library(probe, s.plugin_policy(), std::nullopt);
            plugins::tls_resolver tls = [&s](pid_t t, const tracer::loaded_module& m,
                                             std::uint64_t off) -> std::optional<std::uint64_t> {
                try {
                    if (tracer::thread_db* tdb = s.thread_db()) {
                        return tdb->tls_address(t, m, off);
                    }
                } catch (const std::exception&) {
                }
                return std::nullopt;
            };
            st.ompd = std::make_unique<plugins::ompd_address_space>(lib, *tgt, std::move(tls));
            st.ompd_target = tgt;
            st.ompd_pid = tgt->pid();
        }
        st.ompd->invalidate();
        auto t = st.ompd->thread_of(tid);
        if (!t) {
            return std::nullopt;
        }
        auto par = st.ompd->current_parallel(*t);
        if (levels_out == 0) {
            auto num = st.ompd->icv_number(*t, "thread-num-var");
            auto team = par ? st.ompd->icv_number(*par, "team-size-var") : std::nullopt;
            if (!num || !team) {
                return std::nullopt;
            }
            return std::make_pair(*num, *team);
        }
        for (int k = 0; k < levels_out && par; ++k) {
            par = st.ompd->enclosing_parallel(*par);
        }
        auto team = par ? st.ompd->icv_number(*par, "team-size-var") : std::nullopt;
        if (!team || *team <= 0 || *team > 4096) {
            return std::nullopt;
        }
        for (int member = 0; member < *team; ++member) {
            if (auto m = st.ompd->thread_in_parallel(*par, member); m && st.ompd->same(*m, *t)) {
                return std::make_pair(std::int64_t{member}, *team);
            }
        }
        return std::nullopt;
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "OMPD for DMPL: {}", e.what());
        return std::nullopt;
    }
}

// ---- DWARF facts about a variable's location ------------------------------------------

struct location_facts {
    bool tls = false;    ///< DW_OP_form_tls_address / DW_OP_GNU_push_tls_address
    bool deref = false;  ///< DW_OP_deref: reached through a pointer (gcc's .omp_data_i)
    /// One expression for the whole scope (not a location list, not absent): where the
    /// variable lives can tell how the region shares it.
    bool single = false;
};

location_facts facts_of(const dwarf::variable& v) {
    location_facts f;
    Dwarf_Die die = v.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr) {
        return f;
    }
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_getlocation(&attr, &ops, &n) != 0) {
        return f;  // a location list: not a global, never TLS in practice
    }
    f.single = true;
    for (std::size_t i = 0; i < n; ++i) {
        if (ops[i].atom == DW_OP_form_tls_address || ops[i].atom == DW_OP_GNU_push_tls_address) {
            f.tls = true;
        }
        if (ops[i].atom == DW_OP_deref) {
            f.deref = true;
        }
    }
    return f;
}

// ---- frames ---------------------------------------------------------------------------

/// The ELF symbol of a frame's function (the mangled routine name DMPL demangles).
std::string frame_symbol(const stack_frame& f) {
    if (f.module != nullptr && f.module->elf) {
        std::uint64_t at = f.function ? f.function->low_pc() : f.module->to_file(virt_addr(f.pc()));
        if (auto sym = f.module->elf->symbol_at(at)) {
            return sym->name;
        }
        if (auto sym = f.module->elf->symbol_at(f.module->to_file(virt_addr(f.pc())))) {
            return sym->name;
        }
    }
    return f.function ? f.function->name : f.symbol_name;
}

/// What the folding needs to know about the runtime.
struct fold_context {
    session* s = nullptr;
    plugins::dmpl_library* lib = nullptr;
    const tracer::loaded_module* runtime = nullptr;
    std::string dispatcher;
    std::string invoker;
};

bool in_runtime(const fold_context& fc, const stack_frame& f) {
    return fc.runtime != nullptr && f.module != nullptr && f.module->path == fc.runtime->path &&
           f.module->load_bias == fc.runtime->load_bias;
}

/// The user's function when `f` runs an outlined routine (DMPL_demangle_name), else nullopt.
/// A copy inlined into an outlined routine is not the routine (its pc's symbol is): the
/// routine is the frame of the physical frame's own subprogram, below its inlined copies.
std::optional<std::string> outlined_parent(const fold_context& fc, const stack_frame& f) {
    if (f.is_inlined || in_runtime(fc, f)) {
        return std::nullopt;
    }
    auto d = fc.lib->demangle(frame_symbol(f));
    if (d.rc != DMPL_ok) {
        return std::nullopt;
    }
    return d.name;
}

bool is_dispatcher(const fold_context& fc, const stack_frame& f) {
    return in_runtime(fc, f) && frame_symbol(f) == fc.dispatcher;
}

std::string where_of(const stack_frame& f) {
    if (!f.line) {
        return {};
    }
    return fs::path(f.line->file).filename().string() + ":" + std::to_string(f.line->line);
}

/// Where the construct is: the outlined routine's declaration line (clang: the pragma), else
/// the line of its first instruction (gcc: the pragma too); empty when unknown.
std::string construct_where(const stack_frame& outlined) {
    if (!outlined.function) {
        return {};
    }
    const dwarf::function& fn = *outlined.function;
    if (fn.decl_line > 0 && !fn.decl_file.empty()) {
        return fs::path(fn.decl_file).filename().string() + ":" + std::to_string(fn.decl_line);
    }
    if (outlined.module != nullptr && outlined.module->elf) {
        if (dwarf::debug_info* dbg = outlined.module->elf->debug()) {
            if (auto l = dbg->line_at(fn.low_pc())) {
                return fs::path(l->file).filename().string() + ":" + std::to_string(l->line);
            }
        }
    }
    return {};
}

/// Where a region runs from in another thread: the index of the first frame outward of the
/// dispatcher call that runs `outlined` (nullopt when `tid` did not encounter it).
std::optional<std::size_t> encountering_frame(const fold_context& fc, const std::vector<stack_frame>& frames,
                                              const std::string& outlined) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frame_symbol(frames[i]) != outlined) {
            continue;
        }
        for (std::size_t j = i + 1; j < frames.size(); ++j) {
            if (is_dispatcher(fc, frames[j])) {
                for (std::size_t k = j + 1; k < frames.size(); ++k) {
                    if (!in_runtime(fc, frames[k])) {
                        return k;
                    }
                }
                return std::nullopt;
            }
            if (!in_runtime(fc, frames[j]) && !outlined_parent(fc, frames[j])) {
                break;
            }
        }
    }
    return std::nullopt;
}

/// The innermost outlined routine (mangled) a thread runs, its frame index, or nullopt.
std::optional<std::pair<std::string, std::size_t>> innermost_outlined(const fold_context& fc,
                                                                      const std::vector<stack_frame>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (outlined_parent(fc, frames[i])) {
            // clang: FUNC.omp_outlined_debug__ is called by FUNC.omp_outlined; report the
            // outermost of a chain of outlined frames (the one the runtime called).
            std::size_t j = i;
            while (j + 1 < frames.size() && outlined_parent(fc, frames[j + 1])) {
                ++j;
            }
            return std::make_pair(frame_symbol(frames[j]), j);
        }
    }
    return std::nullopt;
}

/// "[omp parallel in main at fig8.c:21, thread 2 of 4]".
/// The label of a region `levels_out` regions outward of the innermost one `tid` runs in:
/// the thread's number and team size in that region where the runtime can tell.
std::string region_line(fold_context& fc, pid_t tid, const std::string& parent, const std::string& where,
                        int levels_out) {
    std::string l = "[omp parallel in " + parent;
    if (!where.empty()) {
        l += " at " + where;
    }
    if (auto pos = omp_position(*fc.s, tid, levels_out)) {
        l += fmt::format(", thread {} of {}", pos->first, pos->second);
    }
    return l + "]";
}

/// How many regions `frames[0..end)` entered through the runtime's dispatcher: the labels
/// of a thread's stack count outward from its innermost region by these.
int dispatched_regions(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t end) {
    int n = 0;
    for (std::size_t k = 0; k < end && k < frames.size(); ++k) {
        n += is_dispatcher(fc, frames[k]) ? 1 : 0;
    }
    return n;
}

/// Where a team member's region was encountered: the thread and the index of its first
/// frame outward of the runtime's call of the region.
struct encounter {
    pid_t tid = 0;
    std::size_t frame = 0;
};

/// The thread that encountered the region `outlined` (the mangled routine a team member
/// runs, of the user's function `parent`), or nullopt.
std::optional<encounter> find_encounter(fold_context& fc, pid_t tid, const std::string& outlined,
                                        const std::string& parent) {
    session& s = *fc.s;
    tracer::target* tgt = s.target();
    // The thread that called the dispatcher for the same outlined routine.
    for (tracer::thread* th : tgt->threads()) {
        if (th->tid() == tid || th->state() == tracer::thread_state::exited) {
            continue;
        }
        if (auto k = encountering_frame(fc, s.stack(th->tid()), outlined)) {
            return encounter{th->tid(), *k};
        }
    }
    // The encountering thread may have finished its share already and wait in the
    // dispatcher (joining the team): its frames outward of the dispatcher call from the
    // user's function are the parent task's.
    std::string wanted = parent.substr(0, parent.find('('));
    for (tracer::thread* th : tgt->threads()) {
        if (th->tid() == tid || th->state() == tracer::thread_state::exited) {
            continue;
        }
        const auto& other = s.stack(th->tid());
        for (std::size_t k = 0; k < other.size(); ++k) {
            // The dispatcher itself may be gone from the stack (libgomp's GOMP_parallel
            // tail-calls GOMP_parallel_end): any runtime frames called by `wanted`,
            // in a thread that is not running an outlined routine itself.
            if (outlined_parent(fc, other[k])) {
                break;
            }
            if (!in_runtime(fc, other[k])) {
                continue;
            }
            std::size_t q = k + 1;
            while (q < other.size() && in_runtime(fc, other[q])) {
                ++q;
            }
            if (q < other.size() && frame_function_name(other[q]) == wanted) {
                return encounter{th->tid(), q};
            }
            break;
        }
    }
    return std::nullopt;
}

/// Prints frames[from..] of `tid` with runtime frames folded into a region line. Every
/// frame keeps its own number in `tid`'s stack, the one `frame N` selects there. A team
/// member's stack ends at its region line; with `continued`, the frames of the thread that
/// encountered the region follow a separator naming that thread, numbered as in its stack.
void print_folded(fold_context& fc, pid_t tid, const std::vector<stack_frame>& frames, std::size_t from,
                  bool continued, nlohmann::json& rows, int depth) {
    session& s = *fc.s;
    for (std::size_t i = from; i < frames.size(); ++i) {
        const stack_frame& f = frames[i];
        std::string text = format_frame_line(s, f, true);
        s.out().line(text);
        nlohmann::json row = frame_json(f);
        row["lwp"] = tid;
        rows.push_back(std::move(row));
        auto parent = outlined_parent(fc, f);
        if (!parent) {
            continue;
        }
        // Fold the outlined wrappers and the runtime's frames above this routine.
        std::size_t j = i + 1;
        bool saw_dispatcher = false;
        std::size_t outermost = i;
        // The routine's wrappers and the runtime up to the frame that encountered the
        // construct: after the dispatcher, the first frame outside the runtime is that
        // frame, even when it is an enclosing region's outlined routine (nested regions).
        while (j < frames.size()) {
            bool runtime = in_runtime(fc, frames[j]);
            if (!runtime && (saw_dispatcher || !outlined_parent(fc, frames[j]))) {
                break;
            }
            saw_dispatcher = saw_dispatcher || is_dispatcher(fc, frames[j]);
            if (!runtime) {
                outermost = j;
            }
            ++j;
        }
        const int levels_out = dispatched_regions(fc, frames, i);
        const std::string construct = construct_where(frames[outermost]);
        auto where = [&](const stack_frame& parent_frame) {
            return construct.empty() ? where_of(parent_frame) : construct;
        };
        if (saw_dispatcher && j < frames.size()) {
            // This thread encountered the construct: its caller's frames follow.
            std::string l = region_line(fc, tid, *parent, where(frames[j]), levels_out);
            s.out().line(l);
            rows.push_back({{"region", l}, {"lwp", tid}});
            i = j - 1;
            continue;
        }
        // A team member: its stack ends in the thread start; the parent task's frames are in
        // the thread that encountered the construct.
        std::string outermost_outlined;
        for (std::size_t k = i; k < j; ++k) {
            if (outlined_parent(fc, frames[k])) {
                outermost_outlined = frame_symbol(frames[k]);
            }
        }
        auto enc = depth < 8 ? find_encounter(fc, tid, outermost_outlined, *parent) : std::nullopt;
        const auto* other = enc ? &s.stack(enc->tid) : nullptr;
        std::string l =
            region_line(fc, tid, *parent, other != nullptr ? where((*other)[enc->frame]) : construct, levels_out);
        s.out().line(l);
        nlohmann::json region{{"region", l}, {"lwp", tid}};
        if (enc) {
            region["encountered_by"] = enc->tid;
        }
        rows.push_back(std::move(region));
        if (continued && enc) {
            std::string sep = continued_separator(s, enc->tid);
            s.out().line(sep);
            rows.push_back({{"continued_in", enc->tid}, {"thread", s.thread_number(enc->tid)}});
            print_folded(fc, enc->tid, *other, enc->frame, continued, rows, depth + 1);
        }
        return;
    }
}

std::optional<fold_context> make_fold_context(session& s) {
    plugins::dmpl_process* proc = dmpl_quiet(s);
    if (proc == nullptr) {
        return std::nullopt;
    }
    fold_context fc;
    fc.s = &s;
    fc.lib = &proc->library();
    fc.runtime = find_runtime(proc->target()).module;
    if (auto n = fc.lib->rtl_names(DMPL_lang_c)) {
        fc.dispatcher = n->main_task_dispatcher;
        fc.invoker = n->microtask_invoker;
    }
    return fc;
}

/// `bt` with the OpenMP runtime folded (`continued`: `omp bt continued`): true when it
/// printed (the stack runs an outlined routine), false to let the ordinary backtrace print.
bool folded_backtrace(session& s, bool continued) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return false;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return false;
    }
    const auto& frames = s.stack(s.selected_tid());
    if (!innermost_outlined(*fc, frames)) {
        return false;
    }
    nlohmann::json rows = nlohmann::json::array();
    print_folded(*fc, s.selected_tid(), frames, 0, continued, rows, 0);
    s.out().field("frames", rows);
    return true;
}

// ---- threadprivate --------------------------------------------------------------------

struct global_var {
    dwarf::variable var;
    const tracer::loaded_module* module = nullptr;
};

std::optional<global_var> find_global(session& s, const std::string& name) {
    tracer::target* tgt = s.target();
    for (const auto& m : tgt->modules()) {
        if (!m.elf) {
            continue;
        }
        if (dwarf::debug_info* dbg = m.elf->debug()) {
            if (auto g = dbg->find_global(name)) {
                return global_var{*g, &m};
            }
        }
    }
    return std::nullopt;
}

void cmd_omp_threadprivate(session& s, std::string_view args) {
    std::string name(trim(args));
    if (name.empty()) {
        error::send("Argument required (name of a threadprivate variable).");
    }
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    auto g = find_global(s, name);
    if (!g) {
        error::send("No symbol \"" + name + "\" in current context.");
    }
    location_facts lf = facts_of(g->var);
    plugins::dmpl_process* proc = dmpl_for(s, false);
    struct row {
        pid_t tid;
        std::string omp, address, value;
    };
    std::vector<row> rows;
    bool runtime_managed = false;
    for (tracer::thread* th : tgt->threads()) {
        if (th->state() == tracer::thread_state::exited) {
            continue;
        }
        pid_t tid = th->tid();
        row r{tid, "-", "", ""};
        if (auto pos = omp_position(s, tid)) {
            r.omp = std::to_string(pos->first);
        }
        try {
            const auto& st = s.stack(tid);
            if (st.empty()) {
                r.value = "<no frame>";
                rows.push_back(r);
                continue;
            }
            frame_context ctx(s, tid, st[0]);
            dwarf::value v = ctx.read_variable(g->var, g->module);
            if (proc != nullptr && v.address) {
                auto a = proc->tls_address(tid, *v.address);
                if (a.rc == DMPL_ok) {
                    runtime_managed = true;
                    v = dmpl_thread_copy(s, tid, name, v);
                } else if (a.rc == DMPL_tls_unallocated) {
                    runtime_managed = true;
                    r.value = "<not allocated yet (DMPL_tls_unallocated)>";
                } else if (a.rc != DMPL_tls_native) {
                    r.value = "<error: " + a.message + ">";
                }
            }
            if (r.value.empty()) {
                r.address = v.address ? fmt::format("{:#x}", *v.address) : "";
                r.value = dwarf::format_value(v, ctx);
            }
        } catch (const std::exception& e) {
            r.value = std::string("<error: ") + e.what() + ">";
        }
        rows.push_back(r);
    }
    if (!lf.tls && !runtime_managed) {
        error::send("`" + name + "' is not threadprivate: it is not thread-local in the debug information and "
                    "the OpenMP runtime's threadprivate tables do not hold it");
    }
    s.out().line(fmt::format("  {:<4} {:<8} {:<4} {:<18} {}", "Id", "LWP", "OMP", "Address", "Value"));
    nlohmann::json js = nlohmann::json::array();
    for (const auto& r : rows) {
        std::string mark = r.tid == s.selected_tid() ? "*" : " ";
        s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {:<18} {}", mark, s.thread_number(r.tid), r.tid, r.omp,
                                 r.address, r.value));
        js.push_back({{"id", s.thread_number(r.tid)}, {"lwp", r.tid}, {"omp_thread", r.omp},
                      {"address", r.address}, {"value", r.value}});
    }
    s.out().field("variable", name);
    s.out().field("threads", js);
}

// ---- info locals in outlined routines ---------------------------------------------------

std::string called_function(tracer::target& tgt, std::uint64_t return_address);

/// The names a routine's copies can stand for, wherever they are in it (an inner block's
/// copy hides them from the pc's scope): its parameters, and its variables reached through
/// a pointer (gcc's shared variables in .omp_data_i).
std::set<std::string> copied_names(Dwarf_Die routine) {
    std::set<std::string> out;
    std::vector<Dwarf_Die> todo{routine};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        Dwarf_Die child;
        if (dwarf_child(&die, &child) != 0) {
            continue;
        }
        do {
            int tag = dwarf_tag(&child);
            const char* name = dwarf_diename(&child);
            if (tag == DW_TAG_lexical_block) {
                todo.push_back(child);
            } else if (name != nullptr && (tag == DW_TAG_formal_parameter ||
                                           (tag == DW_TAG_variable && [&] {
                                               dwarf::variable v;
                                               v.die = child;
                                               return facts_of(v).deref;
                                           }()))) {
                out.insert(name);
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    return out;
}

/// What the outlined routine of frame `f` does with each of `locals` (outlined_code.hpp):
/// its -O0 frame slots, read from the frame's %rbp, and its code from the module's file.
/// All false where the frame, the code or a slot cannot be read.
std::vector<slot_facts> code_facts(session& s, const fold_context& fc, frame_context& ctx, const stack_frame& f,
                                   const std::vector<dwarf::variable>& locals) {
    std::vector<slot_facts> none(locals.size());
    if (!f.module || !f.module->elf || !f.function || f.function->ranges.empty() || f.is_inlined) {
        return none;
    }
    std::uint64_t rbp = 0;
    try {
        rbp = ctx.frame_registers().fp();
    } catch (const std::exception&) {
        return none;   // the thread is gone: no slots to read
    }
    std::vector<frame_slot> slots;
    for (const auto& v : locals) {
        frame_slot slot{std::numeric_limits<std::int64_t>::min() / 2, 0};
        try {
            dwarf::value val = ctx.read_variable(v);
            if (val.address && !facts_of(v).deref) {
                auto off = static_cast<std::int64_t>(*val.address - rbp);
                if (off > -(1 << 20) && off < (1 << 12)) {
                    slot = {off, val.bytes.size()};
                }
            }
        } catch (const std::exception&) {
            // no slot: nothing found for it
        }
        slots.push_back(slot);
    }
    auto [lo, hi] = f.function->ranges.front();
    if (hi <= lo || hi - lo > (1u << 20)) {
        return none;
    }
    std::vector<std::byte> bytes = f.module->elf->read_bytes(lo, hi - lo);
    dwarf::debug_info* di = f.module->elf->debug();
    // The construct's code is on the lines of the routine's first and last instructions
    // (gcc: the pragma's line for both; clang: the region's braces).
    std::set<int> construct_lines;
    for (std::uint64_t at : {lo, hi - 1}) {
        if (auto l = di != nullptr ? di->line_at(at) : std::nullopt; l && l->line != 0) {
            construct_lines.insert(l->line);
        }
    }
    outlined_code code;
    code.bytes = bytes;
    code.address = f.module->to_runtime(lo).addr();
    tracer::target& tgt = *s.target();
    code.callee_name = [&tgt](std::uint64_t return_address) { return called_function(tgt, return_address); };
    const tracer::loaded_module* m = f.module;
    code.on_construct_line = [di, m, &construct_lines](std::uint64_t addr) {
        auto l = di != nullptr ? di->line_at(m->to_file(virt_addr(addr))) : std::nullopt;
        return l && construct_lines.count(l->line) != 0;
    };
    code.reduction_routines = fc.lib->reduction_routines(DMPL_lang_c);
    return analyse_outlined_code(code, slots);
}

/// `info locals` of an outlined region: the user's variables by source name with their
/// scoping; false when the selected frame is no outlined routine.
bool outlined_locals(session& s) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return false;
    }
    const auto& st = s.stack(s.selected_tid());
    if (st.empty()) {
        return false;
    }
    const stack_frame& f = st[static_cast<std::size_t>(s.selected_frame())];
    // A function inlined into the routine has its own variables, which no clause scopes:
    // gdb's `info locals` shows them (its pc's symbol is the routine's all the same).
    if (!f.function || f.is_inlined) {
        return false;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return false;
    }
    std::string routine = frame_symbol(f);
    if (fc->lib->demangle(routine).rc != DMPL_ok) {
        return false;
    }
    frame_context ctx(s, s.selected_tid(), f);
    std::vector<dwarf::variable> params = ctx.frame_variables(true);
    std::vector<dwarf::variable> locals = ctx.frame_variables(false);
    std::set<std::string> local_names;
    for (const auto& v : locals) {
        local_names.insert(v.name);
    }
    const std::set<std::string> originals = copied_names(f.function->die);
    std::vector<slot_facts> code = code_facts(s, *fc, ctx, f, locals);
    // Optimised code (gcc -O2) keeps the routine's copies and .omp_data_i in registers,
    // described by location lists: nothing tells a shared variable from a private copy
    // there, so no label is better than a wrong one (the values print as gdb's).
    bool evidence = false;
    for (const auto* vars : {&locals, &params}) {
        for (const auto& v : *vars) {
            evidence = evidence || facts_of(v).single;
        }
    }
    nlohmann::json js = nlohmann::json::array();
    int shown = 0;
    auto show = [&](const dwarf::variable& v, bool is_param, const slot_facts& sf) {
        int hints = 0;
        location_facts lf = facts_of(v);
        auto kind = v.var_type.strip_cv_typedef().kind();
        if (is_param) {
            hints |= DMPL_hint_parameter;
            if (local_names.count(v.name)) {
                hints |= DMPL_hint_has_copy;
            }
        } else if (!lf.deref && originals.count(v.name)) {
            hints |= DMPL_hint_copy;
        }
        hints |= (sf.reduction ? DMPL_hint_reduction_code : 0) | (sf.copied_in ? DMPL_hint_copied_in : 0) |
                 (sf.copied_out ? DMPL_hint_copied_out : 0);
        if (lf.deref || kind == dwarf::type_kind::reference || kind == dwarf::type_kind::rvalue_reference ||
            (is_param && kind == dwarf::type_kind::pointer)) {
            hints |= DMPL_hint_by_reference;
        }
        auto d = fc->lib->demangle(routine + "::" + v.name, hints);
        if (d.rc == DMPL_name_internal) {
            return;
        }
        std::string name = d.rc == DMPL_ok ? d.name : v.name;
        std::string scope = evidence ? plugins::dmpl_varinfo_name(d.varinfo) : std::string();
        std::string value;
        try {
            dwarf::value val = ctx.read_variable(v);
            // clang passes shared variables as C++ references: show the user's variable.
            auto referenced_type = v.var_type.strip_cv_typedef().target();
            if ((kind == dwarf::type_kind::reference || kind == dwarf::type_kind::rvalue_reference) &&
                referenced_type && val.bytes.size() == 8) {
                std::uint64_t target = 0;
                std::memcpy(&target, val.bytes.data(), 8);
                dwarf::value referenced;
                referenced.val_type = *referenced_type;
                referenced.address = target;
                val = referenced;
            }
            value = dwarf::format_value(val, ctx);
        } catch (const std::exception& e) {
            value = std::string("<error: ") + e.what() + ">";
        }
        s.out().line(name + " = " + value + (scope.empty() ? "" : "  (" + scope + ")"));
        js.push_back({{"name", name}, {"value", value}, {"scoping", scope}});
        ++shown;
    };
    for (std::size_t i = 0; i < locals.size(); ++i) {
        show(locals[i], false, code[i]);
    }
    for (const auto& v : params) {
        show(v, true, slot_facts{});
    }
    if (shown == 0) {
        s.out().line("No locals.");
    }
    s.out().field("locals", js);
    return true;
}

// ---- libgomp: omp threads / omp parallel from DMPL and the stacks ----------------------


std::string libgomp_limits(const tracer::loaded_module* m, const std::string& reader_problem) {
    std::string why =
        reader_problem.empty()
            ? "libgomp has no OMPD support: OpenMP thread numbers, team sizes and levels come from libgomp's "
              "per-thread data (read the way its omp_get_thread_num/omp_get_num_threads/omp_get_level do); "
              "thread states, tasks and ICVs cannot be shown"
            : "libgomp has no OMPD support, so OpenMP thread numbers (except the encountering thread's 0), team "
              "sizes, thread states, tasks and ICVs cannot be shown (" +
                  reader_problem + ")";
    if (m != nullptr && m->elf && m->elf->debug() == nullptr) {
        why += "; " + m->path.string() + " has no debug information either (Debian ships it in "
               "libgomp1-dbgsym, outside the main archive)";
    }
    return why + ".";
}

struct gomp_thread_view {
    pid_t tid = 0;
    std::string role;
    std::string region;       ///< "omp parallel in main at fig8.c:21"
    std::string outlined;     ///< mangled outlined routine
    bool encountering = false;
    /// The thread's place in its team, from libgomp's per-thread data (libgomp only).
    std::optional<gomp_team_reader::place> place;
};

std::vector<gomp_thread_view> gomp_threads(session& s, fold_context& fc, std::string* reader_problem = nullptr) {
    std::vector<gomp_thread_view> out;
    std::map<std::string, std::string> where_by_routine;  // outlined → construct location
    tracer::target* tgt = s.target();
    std::optional<gomp_team_reader> reader;
    if (auto rt = find_runtime(*tgt); rt.kind == runtime_kind::libgomp && rt.module != nullptr && rt.module->elf) {
        reader.emplace(*tgt, *rt.module);
        if (reader_problem != nullptr) {
            *reader_problem = reader->problem();
        }
    }
    for (tracer::thread* th : tgt->threads()) {
        if (th->state() == tracer::thread_state::exited) {
            continue;
        }
        gomp_thread_view v;
        v.tid = th->tid();
        const auto& frames = s.stack(v.tid);
        auto inner = innermost_outlined(fc, frames);
        if (inner) {
            v.outlined = inner->first;
            if (std::string w = construct_where(frames[inner->second]); !w.empty()) {
                where_by_routine[v.outlined] = w;
            }
            if (auto k = encountering_frame(fc, frames, v.outlined)) {
                v.encountering = true;
                where_by_routine.emplace(v.outlined, where_of(frames[*k]));
            }
            v.role = v.encountering ? "encountering thread (OpenMP thread 0)" : "team member";
            if (reader) {
                v.place = reader->of(v.tid);
            }
            if (v.place) {
                v.role = fmt::format("{}OpenMP thread {} of {} (level {})", v.encountering ? "encountering thread, " : "",
                                     v.place->thread_num, v.place->team_size, v.place->level);
            }
        } else {
            bool runtime = std::any_of(frames.begin(), frames.end(),
                                       [&](const stack_frame& f) { return in_runtime(fc, f); });
            v.role = runtime ? "in libgomp (idle, or between regions)" : "not in a parallel region";
        }
        out.push_back(v);
    }
    for (auto& v : out) {
        if (v.outlined.empty()) {
            continue;
        }
        auto parent = fc.lib->demangle(v.outlined);
        v.region = "omp parallel in " + (parent.rc == DMPL_ok ? parent.name : v.outlined);
        if (auto it = where_by_routine.find(v.outlined); it != where_by_routine.end() && !it->second.empty()) {
            v.region += " at " + it->second;
        }
    }
    return out;
}

void gomp_omp_threads(session& s, fold_context& fc, const tracer::loaded_module* rt) {
    std::string problem;
    auto views = gomp_threads(s, fc, &problem);
    s.out().line(fmt::format("  {:<4} {:<8} {:<52} {}", "Id", "LWP", "Role", "Region"));
    nlohmann::json js = nlohmann::json::array();
    for (const auto& v : views) {
        std::string mark = v.tid == s.selected_tid() ? "*" : " ";
        s.out().line(fmt::format("{} {:<4} {:<8} {:<52} {}", mark, s.thread_number(v.tid), v.tid, v.role, v.region));
        nlohmann::json j{{"id", s.thread_number(v.tid)}, {"lwp", v.tid}, {"role", v.role}, {"region", v.region}};
        if (v.place) {
            j["thread_num"] = v.place->thread_num;
            j["team_size"] = v.place->team_size;
            j["level"] = v.place->level;
        }
        js.push_back(std::move(j));
    }
    s.out().line("(from ompdbg's DMPL library for libgomp and the threads' stacks: " + libgomp_limits(rt, problem) + ")");
    s.out().field("threads", js);
    s.out().field("limits", libgomp_limits(rt, problem));
}

void gomp_omp_parallel(session& s, fold_context& fc, const tracer::loaded_module* rt) {
    std::string problem;
    auto views = gomp_threads(s, fc, &problem);
    std::map<std::string, std::vector<const gomp_thread_view*>> regions;
    for (const auto& v : views) {
        if (!v.outlined.empty()) {
            regions[v.outlined].push_back(&v);
        }
    }
    nlohmann::json js = nlohmann::json::array();
    if (regions.empty()) {
        s.out().line("No thread is running a parallel region.");
    }
    for (const auto& [routine, members] : regions) {
        std::string enc = "?";
        std::string ids;
        for (const auto* v : members) {
            ids += (ids.empty() ? "" : ", ") + std::to_string(s.thread_number(v->tid));
            if (v->encountering) {
                enc = std::to_string(s.thread_number(v->tid));
            }
        }
        std::string l = fmt::format("{} (outlined {}): encountered by thread {}; threads running it now: {}",
                                    members.front()->region, routine, enc, ids);
        s.out().line(l);
        js.push_back({{"region", members.front()->region}, {"outlined", routine}, {"threads_in_region", ids}});
    }
    s.out().line("(from ompdbg's DMPL library for libgomp and the threads' stacks: team members waiting in "
                 "libgomp are not attributed to a region; " +
                 libgomp_limits(rt, problem) + ")");
    s.out().field("regions", js);
}

/// The function a `call` just before `return_address` went to: `call f@plt` (E8 rel32 to a
/// PLT stub, named by the GOT slot it jumps through: elf_file::plt_symbol_at), a direct
/// call, or -fno-plt's `call *GOT(%rip)` (the slot's relocation, else what the slot holds);
/// "" when it cannot tell.
/// libgomp's GOMP_barrier tail-calls its unnamed internals, so no frame of it is left on
/// the stack: the caller's call instruction still names it.
std::string called_function(tracer::target& tgt, std::uint64_t return_address) {
    unsigned char before[6] = {};
    if (return_address < 6 ||
        tgt.try_read_memory(virt_addr(return_address - 6), std::as_writable_bytes(std::span(before))) != 6) {
        return {};
    }
    std::int32_t rel32 = 0;
    std::memcpy(&rel32, before + 2, 4);
    // `lookup(elf, file address)` in the module holding run-time address `addr`.
    auto in_module = [&](std::uint64_t addr, auto&& lookup) -> std::optional<std::string> {
        const tracer::loaded_module* m = tgt.module_at(virt_addr(addr));
        if (m == nullptr || !m->elf) {
            return std::nullopt;
        }
        return lookup(*m->elf, m->to_file(virt_addr(addr)));
    };
    auto symbol_named = [](const dwarf::elf_file& e, std::uint64_t a) -> std::optional<std::string> {
        if (auto sym = e.symbol_at(a)) {
            return sym->name;
        }
        return std::nullopt;
    };
    if (before[0] == 0xff && before[1] == 0x15) {
        std::uint64_t got = return_address + static_cast<std::int64_t>(rel32);
        auto name = in_module(got, [](const dwarf::elf_file& e, std::uint64_t a) { return e.got_slot_symbol(a); });
        std::uint64_t target = 0;
        if (!name && tgt.try_read_memory(virt_addr(got), std::as_writable_bytes(std::span(&target, 1))) == 8) {
            name = in_module(target, symbol_named);
        }
        return name.value_or("");
    }
    if (before[1] == 0xe8) {
        std::uint64_t callee = return_address + static_cast<std::int64_t>(rel32);
        auto name = in_module(callee, [&](const dwarf::elf_file& e, std::uint64_t a) -> std::optional<std::string> {
            if (auto stub = e.plt_symbol_at(a)) {
                return stub->name.substr(0, stub->name.rfind("@plt"));
            }
            return symbol_named(e, a);
        });
        return name.value_or("");
    }
    return {};
}

/// What a thread inside a region does, from the runtime entry point its outlined routine
/// called (the frame just inside the outlined one): the public names of libgomp and libomp
/// are in their dynamic symbol tables even when the runtime has no other symbols.
std::string runtime_call_state(const fold_context& fc, const std::vector<stack_frame>& frames, std::size_t outlined) {
    if (outlined == 0 || !in_runtime(fc, frames[outlined - 1])) {
        return "in the region";
    }
    std::string entry = frame_symbol(frames[outlined - 1]);
    if (fc.s->target() != nullptr) {
        // The entry point the routine called (its frame may be gone: a tail call), which
        // names the construct better than the innermost runtime frame.
        if (std::string called = called_function(*fc.s->target(), frames[outlined].pc()); !called.empty()) {
            entry = called;
        }
    }
    static const std::vector<std::pair<std::string_view, std::string_view>> kinds{
        {"GOMP_barrier", "barrier wait"},          {"__kmpc_barrier", "barrier wait"},
        {"GOMP_critical", "critical wait"},        {"__kmpc_critical", "critical wait"},
        {"omp_set_lock", "lock wait"},             {"omp_set_nest_lock", "lock wait"},
        {"GOMP_taskwait", "taskwait"},             {"__kmpc_omp_taskwait", "taskwait"},
        {"GOMP_taskgroup_end", "taskgroup wait"},  {"__kmpc_end_taskgroup", "taskgroup wait"},
        {"GOMP_ordered", "ordered wait"},          {"__kmpc_ordered", "ordered wait"},
    };
    for (const auto& [prefix, kind] : kinds) {
        if (entry.starts_with(prefix)) {
            return fmt::format("{} ({})", kind, entry);
        }
    }
    return entry.empty() ? "in the runtime" : "in the runtime (" + entry + ")";
}

/// Replaces the handler of `name` in `table` by `wrap(old handler)`.
void wrap(command_table& table, std::string_view name,
          const std::function<command_handler(command_handler)>& wrapper) {
    command* c = table.find_mutable(name);
    if (c == nullptr || !c->handler) {
        return;
    }
    c->handler = wrapper(c->handler);
}

runtime_kind runtime_of(session& s) {
    tracer::target* tgt = s.target();
    return tgt == nullptr ? runtime_kind::none : find_runtime(*tgt).kind;
}

}  // namespace

dwarf::value dmpl_thread_copy(session& s, pid_t tid, const std::string& name, dwarf::value v) {
    if (!v.address || tid == 0 || s.target() == nullptr) {
        return v;
    }
    plugins::dmpl_process* proc = dmpl_quiet(s);
    if (proc == nullptr) {
        return v;
    }
    auto a = proc->tls_address(tid, *v.address);
    if (a.rc == DMPL_tls_native || (a.rc == DMPL_ok && a.address == *v.address)) {
        return v;
    }
    if (a.rc == DMPL_tls_unallocated) {
        error::send(fmt::format("Thread {} has not allocated its copy of threadprivate `{}' yet "
                                "(DMPL_tls_unallocated)",
                                s.thread_number(tid), name));
    }
    if (a.rc != DMPL_ok) {
        error::send(a.message);
    }
    std::vector<std::byte> bytes(v.val_type.size());
    if (s.target()->try_read_memory(virt_addr(a.address), bytes) != bytes.size()) {
        error::send(fmt::format("Cannot access memory at address {:#x}", a.address));
    }
    v.address = a.address;
    v.bytes = std::move(bytes);
    return v;
}

std::vector<dmpl_thread_position> dmpl_thread_positions(session& s) {
    if (dmpl_for(s, true) == nullptr) {
        error::send("no OpenMP runtime is loaded in the program (yet)");
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        error::send("the DMPL library cannot be used");
    }
    std::vector<dmpl_thread_position> out;
    for (const auto& v : gomp_threads(s, *fc)) {
        dmpl_thread_position p;
        p.tid = v.tid;
        p.region = v.region;
        p.encountering = v.encountering;
        if (v.place) {
            p.thread_num = v.place->thread_num;
            p.team_size = v.place->team_size;
            p.level = v.place->level;
        }
        const auto& frames = s.stack(v.tid);
        if (auto inner = innermost_outlined(*fc, frames)) {
            // clang's chain: the routine the runtime called is outermost; the call into the
            // runtime comes from the innermost of the chain.
            std::size_t k = inner->second;
            while (k > 0 && outlined_parent(*fc, frames[k - 1])) {
                --k;
            }
            p.state = runtime_call_state(*fc, frames, k);
        } else {
            p.state = v.role.starts_with("in libgomp") ? "idle in the runtime" : "not in a parallel region";
        }
        out.push_back(std::move(p));
    }
    process_state(s).proc.reset();
    return out;
}

void dmpl_set_library(session& s, const std::string& path) {
    if (path.empty()) {
        error::send("Argument required (path of a DMPL library).");
    }
    dmpl_library_state& st = library_state(s);
    st.library_setting = fs::path(path);
    for (auto& inf : s.inferiors()) {
        if (auto* p = inf->model_state.find<dmpl_process_state>()) {
            p->proc.reset();
        }
    }
    st.library.reset();
}

void register_dmpl_commands(command_table& t) {
    command_table& omp = t.prefix("omp");
    omp.add(command{"threadprivate", {"tp"}, "Show every thread's copy of a threadprivate variable.",
                    "omp threadprivate NAME\nThe value and address of NAME in every thread: native TLS through\n"
                    "libthread_db, copies kept by the OpenMP runtime through its DMPL library.",
                    cmd_omp_threadprivate, false, nullptr});
    command_table& set = t.prefix("set");
    set.add(command{"dmpl-library", {}, "Use this DMPL library for the program's OpenMP runtime.",
                    "set dmpl-library PATH\nLoad PATH (under the plugin-path policy) instead of ompdbg's own\n"
                    "DMPL library for libomp or libgomp.",
                    [](session& s, std::string_view a) { dmpl_set_library(s, std::string(trim(a))); }, false,
                    nullptr});

    wrap(t, "backtrace", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            // `set omp-bt-filter off` leaves every frame to gdb's plain backtrace.
            if (trim(args).empty() && omp_bt_filter(s) && folded_backtrace(s, false)) {
                return;
            }
            old(s, args);
        };
    });
    if (command* info = t.find_mutable("info"); info != nullptr && info->subcommands) {
        wrap(*info->subcommands, "locals", [](command_handler old) -> command_handler {
            return [old](session& s, std::string_view args) {
                if (!outlined_locals(s)) {
                    old(s, args);
                }
            };
        });
    }
    wrap(omp, "info", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            std::string ompd_problem;
            try {
                old(s, args);
            } catch (const error& e) {
                if (runtime_of(s) == runtime_kind::none) {
                    throw;
                }
                ompd_problem = e.what();
            }
            plugins::dmpl_process* proc = dmpl_for(s, true);
            auto& lib = proc->library();
            s.out().line("DMPL library:        " + lib.path().string());
            s.out().line("DMPL version string: " + lib.version_string());
            s.out().line(fmt::format("DMPL interface:      {} ({})", lib.compatibility(), lib.initialiser()));
            if (auto n = lib.rtl_names(DMPL_lang_c)) {
                s.out().line("DMPL runtime names:  " + n->main_task_dispatcher + ", " + n->microtask_invoker);
            }
            if (!ompd_problem.empty()) {
                s.out().line("OMPD:                not available: " + ompd_problem);
            }
            s.out().field("dmpl_library", lib.path().string());
            s.out().field("dmpl_version_string", lib.version_string());
        };
    });
    for (const char* name : {"threads", "parallel"}) {
        std::string which = name;
        wrap(omp, name, [which](command_handler old) -> command_handler {
            return [old, which](session& s, std::string_view args) {
                if (runtime_of(s) != runtime_kind::libgomp) {
                    old(s, args);
                    return;
                }
                auto fc = make_fold_context(s);
                if (!fc) {
                    dmpl_for(s, true);  // says why
                    return;
                }
                const tracer::loaded_module* rt = find_runtime(*s.target()).module;
                if (which == "threads") {
                    gomp_omp_threads(s, *fc, rt);
                } else {
                    gomp_omp_parallel(s, *fc, rt);
                }
            };
        });
    }
    wrap(omp, "bt", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            try {
                old(s, args);
            } catch (const error&) {
                // No OMPD (libgomp, OMP_DEBUG unset): fold with the DMPL rtl names instead.
                if (!folded_backtrace(s, trim(args) == "continued")) {
                    throw;
                }
            }
        };
    });
}

}  // namespace ompdbg::app

