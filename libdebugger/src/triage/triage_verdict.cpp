// Movement between the samples of `ompdbg triage` and the verdict drawn from it. A verdict
// is a promise (issue 17): a deadlock needs the wait-for cycle in every sample and no MPI
// progress between them, measured from ob1's sequence numbers and the queues, never from
// CPU time or frames; a hang needs nothing to have moved.

#include "ompdbg/debugger/triage/triage_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/mpi/wait_for_graph.hpp"
#include "ompdbg/debugger/run/signal_names.hpp"

namespace ompdbg::debugger::triage {

namespace {

/// A signal that ends a process with a core dump on its own (a crash), as opposed to the
/// stop signal a debugger's gcore records (SIGTRAP at a breakpoint, SIGSTOP, SIGINT).
bool crash_signal(int sig) {
    switch (sig) {
    case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGABRT: case SIGQUIT: case SIGSYS:
    case SIGXCPU: case SIGXFSZ:
        return true;
    default:
        return false;
    }
}

}  // namespace

// ---- trees --------------------------------------------------------------------------

std::string count_text(std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

namespace {

/// In how many samples the kernel had the thread running or runnable ('R').
std::size_t runnable_samples(const std::vector<snapshot>& snaps, int rank, pid_t tid) {
    std::size_t runnable = 0;
    for (const auto& snap : snaps) {
        bool here = false;
        for (const auto& p : snap.procs) {
            for (const auto& t : p.threads) {
                here = here || (p.rank == rank && t.tid == tid && t.run_state == 'R');
            }
        }
        runnable += here ? 1 : 0;
    }
    return runnable;
}

/// A thread busy-waits, or computes, when the kernel had it running or runnable ('R') at
/// every sample, or at most of them (at least half) and it used CPU time between the first
/// and the last: a thread asleep in the kernel (a futex, read, poll) is 'S' and uses none.
/// Neither test alone holds on a loaded machine: a spinning thread is now and then caught
/// in a short sleep (a page fault, a write of its log), and a thread that spins with
/// sched_yield among many may get no CPU time at all over a second while staying runnable.
/// Its share of the CPU is no measure for the same reason.
/// `runnable`: runnable_samples of the thread, out of `samples`.
bool busy(std::size_t runnable, std::size_t samples, double cpu_seconds) {
    return runnable == samples || (cpu_seconds > 0 && 2 * runnable >= samples);
}

/// Messages between two readings of a rank's sequence numbers (modulo their widths).
std::uint64_t messages_between(const process_view& a, const process_view& b) {
    std::uint64_t n = 0;
    for (const auto& [key, now] : *b.mpi_sequences) {
        auto it = a.mpi_sequences->find(key);
        auto [sent0, matched0] = it == a.mpi_sequences->end() ? std::pair<std::uint32_t, std::uint16_t>{0, 0} : it->second;
        n += static_cast<std::uint32_t>(now.first - sent0) + static_cast<std::uint16_t>(now.second - matched0);
    }
    return n;
}

/// Voluntary context switches one attach/detach cycle causes a sleeping thread (its wait
/// is interrupted into the ptrace stop and restarted after the detach), with a margin.
constexpr long attach_switches = 4;

}  // namespace

movement compare(const std::vector<snapshot>& snaps) {
    movement m;
    if (snaps.size() < 2) {
        return m;
    }
    m.span = std::chrono::duration<double>(snaps.back().when - snaps.front().when).count();
    static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::map<std::pair<int, pid_t>, long> first_cpu;
    for (const auto& p : snaps.front().procs) {
        for (const auto& t : p.threads) {
            if (t.cpu_ticks) {
                first_cpu[{p.rank, t.tid}] = *t.cpu_ticks;
            }
        }
    }
    for (const auto& p : snaps.back().procs) {
        for (const auto& t : p.threads) {
            auto it = first_cpu.find({p.rank, t.tid});
            if (t.cpu_ticks && it != first_cpu.end()) {
                double seconds = static_cast<double>(*t.cpu_ticks - it->second) / ticks_per_second;
                m.cpu[{p.rank, t.tid}] = seconds;
                const std::size_t runnable = runnable_samples(snaps, p.rank, t.tid);
                if (busy(runnable, snaps.size(), seconds)) {
                    m.busy.insert({p.rank, t.tid});
                }
                // A thread running the program's own code, runnable all along, that got no
                // CPU time: whether it computes cannot be seen in its stack.
                if (*t.cpu_ticks == it->second && t.in_program && runnable == snaps.size()) {
                    m.cpu_starved.insert({p.rank, t.tid});
                }
            }
        }
    }
    // MPI messages, rank by rank, when every sample of every rank could read them.
    const snapshot& last = snaps.back();
    m.messages_readable = last.mpi && last.procs.size() > 1;
    for (const auto& p : last.procs) {
        std::uint64_t total = 0, at_end = 0;
        for (std::size_t i = 1; i < snaps.size() && m.messages_readable; ++i) {
            const process_view* before = nullptr;
            const process_view* now = nullptr;
            for (const auto& q : snaps[i - 1].procs) {
                before = q.rank == p.rank ? &q : before;
            }
            for (const auto& q : snaps[i].procs) {
                now = q.rank == p.rank ? &q : now;
            }
            for (const process_view* q : {before, now}) {
                if (m.messages_readable && (q == nullptr || !q->mpi_sequences)) {
                    m.messages_readable = false;
                    m.messages_note = q == nullptr ? fmt::format("rank {} missing from a sample", p.rank)
                                                   : fmt::format("rank {}: {}", p.rank, q->mpi_sequences_note);
                }
            }
            if (m.messages_readable) {
                at_end = messages_between(*before, *now);
                total += at_end;
            }
        }
        m.messages[p.rank] = total;
        m.messages_last[p.rank] = at_end;
    }
    if (!m.messages_readable) {
        m.messages.clear();
        m.messages_last.clear();
    }
    for (std::size_t i = 1; i < snaps.size(); ++i) {
        std::map<std::pair<int, pid_t>, const thread_view*> before;
        for (const auto& p : snaps[i - 1].procs) {
            for (const auto& t : p.threads) {
                before[{p.rank, t.tid}] = &t;
            }
        }
        for (const auto& p : snaps[i].procs) {
            for (const auto& t : p.threads) {
                auto it = before.find({p.rank, t.tid});
                // Only threads in the program's own code count (a runtime's or the MPI
                // library's helper threads wake up on their own). Such a thread moved when it
                // is new, when its program frames changed, or when it slept and woke up
                // again more often than triage's own attach and detach make it.
                if (t.user_pcs.empty()) {
                    continue;
                }
                bool switched = it != before.end() && t.switches && it->second->switches &&
                                *t.switches - *it->second->switches > attach_switches;
                if (it == before.end() || it->second->user_pcs != t.user_pcs || switched) {
                    m.moved.insert({p.rank, t.tid});
                    m.moved_ranks.insert(p.rank);
                }
            }
        }
    }
    return m;
}

// ---- findings and verdict -----------------------------------------------------------

namespace {

std::string process_name(const process_view& p) {
    return p.rank >= 0 ? fmt::format("rank {}", p.rank) : fmt::format("process {}", p.pid);
}

}  // namespace

/// "in rank 2, 7 of 8 OpenMP threads wait in a barrier (...) of region X; thread 4 is in read"
std::vector<std::string> openmp_findings(const snapshot& snap) {
    std::vector<std::string> out;
    for (const auto& p : snap.procs) {
        std::map<std::string, std::vector<const thread_view*>> by_region;
        for (const auto& t : p.threads) {
            if (t.openmp && !t.region.empty()) {
                by_region[t.region].push_back(&t);
            }
        }
        for (const auto& [region, threads] : by_region) {
            std::map<std::string, std::vector<const thread_view*>> by_state;
            for (auto* t : threads) {
                by_state[t->state].push_back(t);
            }
            std::size_t team = threads.size();
            if (threads.front()->team_size) {
                team = static_cast<std::size_t>(*threads.front()->team_size);
            }
            for (const auto& [state, ts] : by_state) {
                if (state.find("wait") == std::string::npos) {
                    continue;
                }
                std::string what = state.find("barrier") != std::string::npos ? "wait in a barrier"
                                   : state.find("lock") != std::string::npos   ? "wait for a lock"
                                   : state.find("critical") != std::string::npos ? "wait to enter a critical section"
                                                                                  : "wait";
                std::string text = fmt::format("in {}, {} of {} OpenMP threads {} ({}) of the region {}",
                                               process_name(p), ts.size(), team, what, state, region);
                std::vector<std::string> others;
                for (const auto& [other_state, os] : by_state) {
                    if (other_state == state) {
                        continue;
                    }
                    for (auto* t : os) {
                        std::string who = t->thread_num
                                              ? fmt::format("OpenMP thread {}", *t->thread_num)
                                              : fmt::format("thread {} (LWP {})", t->number, t->tid);
                        others.push_back(fmt::format("{} is {}{}", who,
                                                     other_state.empty() ? "elsewhere" : other_state,
                                                     t->where.empty() ? "" : " in " + t->where));
                    }
                }
                if (!others.empty() && others.size() <= 4) {
                    text += "; ";
                    for (std::size_t i = 0; i < others.size(); ++i) {
                        text += (i ? "; " : "") + others[i];
                    }
                }
                out.push_back(text);
            }
        }
    }
    return out;
}

std::vector<std::string> mpi_findings(const std::vector<snapshot>& snaps, const movement& m) {
    std::vector<std::string> out;
    const snapshot& snap = snaps.back();
    if (!snap.mpi || snap.procs.size() < 2) {
        return out;
    }
    // Ranks inside collectives, by call: all in one (a slow or hung collective), or some
    // ranks in one while others are elsewhere (those never arrived).
    std::map<std::string, std::vector<int>> in_collective;
    for (const auto& p : snap.procs) {
        if (p.activity == rank_activity::blocked_collective) {
            in_collective[p.mpi_call].push_back(p.rank);
        }
    }
    for (const auto& [call, ranks] : in_collective) {
        if (ranks.size() == snap.procs.size()) {
            out.push_back(fmt::format("all {} ranks are in {}", ranks.size(), call));
            continue;
        }
        // The ranks that never arrived, and where each one is instead (its MPI call, or the
        // main thread's innermost frame of the program): the rank to look at.
        std::vector<int> missing;
        std::vector<std::string> where;
        for (const auto& p : snap.procs) {
            if (std::find(ranks.begin(), ranks.end(), p.rank) != ranks.end()) {
                continue;
            }
            missing.push_back(p.rank);
            std::string at;
            for (const auto& th : p.threads) {
                if (th.tid == p.pid) {
                    at = th.where;
                }
            }
            std::string in_call = p.mpi_call.empty() ? "" : "in " + p.mpi_call;
            if (!at.empty()) {
                in_call += (in_call.empty() ? "in " : " from ") + at;
            }
            if (!p.error.empty()) {
                in_call = p.error;
            }
            where.push_back(fmt::format("rank {} {}", p.rank, in_call.empty() ? "is elsewhere" : "is " + in_call));
        }
        std::string text = fmt::format("rank {} wait in {}; rank {} never entered it", format_rank_list(ranks), call,
                                       format_rank_list(missing));
        if (where.size() <= 4) {
            for (std::size_t i = 0; i < where.size(); ++i) {
                text += (i == 0 ? ": " : "; ") + where[i];
            }
        }
        out.push_back(text);
    }
    // A wait is a finding when it lasted: the rank waited so in every sample and none of its
    // MPI messages moved in between (one snapshot cannot tell; the verdict says so). A rank
    // of a moving job caught waiting for a moment is no finding.
    auto lasted = [&](int rank, auto waits_in) {
        if (snaps.size() < 2) {
            return true;
        }
        for (const auto& sn : snaps) {
            if (!waits_in(sn)) {
                return false;
            }
        }
        if (m.messages_readable) {
            auto it = m.messages.find(rank);
            return it != m.messages.end() && it->second == 0;
        }
        return !m.moved_ranks.count(rank);
    };
    for (const auto& w : snap.deadlock.waits_on_finished) {
        bool kept = lasted(w.rank, [&](const snapshot& sn) {
            return std::any_of(sn.deadlock.waits_on_finished.begin(), sn.deadlock.waits_on_finished.end(),
                               [&](const auto& o) { return o.rank == w.rank && o.peer == w.peer; });
        });
        if (kept) {
            out.push_back("waiting on a finished rank: " + w.describe(snap.graph));
        }
    }
    for (const auto& st : snap.deadlock.starved) {
        bool kept = lasted(st.rank, [&](const snapshot& sn) {
            return std::any_of(sn.deadlock.starved.begin(), sn.deadlock.starved.end(),
                               [&](const auto& o) { return o.rank == st.rank; });
        });
        if (kept) {
            out.push_back(fmt::format("starved: rank {} {}", st.rank, st.why));
        }
    }
    return out;
}

namespace {

/// The threads that stayed runnable (see busy()) while their stacks stood still
/// (busy-waiting: a spinning barrier, an MPI call polling for progress), grouped by what
/// they wait in: "3 threads of rank 1-3 busy-wait in MPI_Barrier (0.28 s of CPU time each
/// in 0.6 s)"; "" when none.
std::string busy_waiting(const snapshot& last, const movement& m) {
    struct group {
        std::set<int> ranks;
        std::size_t threads = 0;
        double cpu = 0;
    };
    std::map<std::string, group> by_wait;
    for (const auto& p : last.procs) {
        for (const auto& t : p.threads) {
            auto it = m.cpu.find({p.rank, t.tid});
            if (it == m.cpu.end() || !m.busy.count({p.rank, t.tid}) || m.moved.count({p.rank, t.tid})) {
                continue;
            }
            std::string wait = t.tid == p.pid && !p.mpi_call.empty() ? p.mpi_call
                               : t.openmp && !t.state.empty()        ? t.state
                               : !t.where.empty()                    ? t.where
                               : !t.frames.empty()                   ? t.frames.back()
                                                                     : "?";
            group& g = by_wait[wait];
            g.ranks.insert(p.rank);
            ++g.threads;
            g.cpu += it->second;
        }
    }
    std::string out;
    for (const auto& [wait, g] : by_wait) {
        std::string of_ranks = last.mpi && last.procs.size() > 1
                                   ? fmt::format(" of rank {}", format_rank_list({g.ranks.begin(), g.ranks.end()}))
                                   : "";
        out += fmt::format("{}{}{} busy-wait{} in {} ({:.2f} s of CPU time{} in {:.1f} s)", out.empty() ? "" : "; ",
                           count_text(g.threads, "thread"), of_ranks, g.threads == 1 ? "s" : "", wait,
                           g.cpu / static_cast<double>(g.threads), g.threads == 1 ? "" : " each", m.span);
    }
    return out;
}


/// The queue lines of `rank` in a sample (what the report prints), or nullptr.
const std::vector<std::string>* queue_lines_of(const snapshot& sn, int rank) {
    for (const auto& p : sn.procs) {
        if (p.rank == rank) {
            return &p.queue_lines;
        }
    }
    return nullptr;
}

}  // namespace

cycle_evidence weigh_cycles(const std::vector<snapshot>& snaps, const movement& m) {
    cycle_evidence e;
    const snapshot& last = snaps.back();
    if (last.deadlock.cycles.empty()) {
        return e;
    }
    e.any = true;
    const std::string first = last.deadlock.cycles.front().describe();
    if (snaps.size() < 2) {
        e.text = fmt::format("a wait-for cycle in one snapshot ({}): one snapshot cannot tell a deadlock from a "
                             "momentary wait (--samples 2 or more compares)",
                             first);
        return e;
    }
    // The cycles (by their ranks) of the last sample that every sample has.
    std::set<int> ranks;
    const wait_for_graph::cycle* lasting = nullptr;
    for (const auto& c : last.deadlock.cycles) {
        bool everywhere = std::all_of(snaps.begin(), snaps.end(), [&](const snapshot& sn) {
            return std::any_of(sn.deadlock.cycles.begin(), sn.deadlock.cycles.end(),
                               [&](const auto& d) { return d.ranks == c.ranks; });
        });
        if (everywhere) {
            lasting = lasting == nullptr ? &c : lasting;
            ranks.insert(c.ranks.begin(), c.ranks.end());
        }
    }
    if (lasting == nullptr) {
        e.text = fmt::format("the wait-for cycle of the last sample ({}) was not in every sample: momentary waits",
                             first);
        return e;
    }
    std::string cycle = lasting->describe();
    std::string of_ranks = format_rank_list({ranks.begin(), ranks.end()});
    if (!m.messages_readable) {
        e.text = fmt::format("a wait-for cycle in every sample ({}), not called a deadlock: MPI progress could not be "
                             "measured ({})",
                             cycle, m.messages_note);
        return e;
    }
    std::uint64_t moved = 0;
    for (int r : ranks) {
        auto it = m.messages.find(r);
        moved += it == m.messages.end() ? 0 : it->second;
    }
    if (moved > 0) {
        e.text = fmt::format("a wait-for cycle in every sample ({}), but rank {} sent or matched {} MPI messages "
                             "between the samples: momentary waits",
                             cycle, of_ranks, moved);
        return e;
    }
    for (int r : ranks) {
        const auto* now = queue_lines_of(last, r);
        for (const auto& sn : snaps) {
            const auto* then = queue_lines_of(sn, r);
            if (now == nullptr || then == nullptr || *now != *then) {
                e.text = fmt::format("a wait-for cycle in every sample ({}), but the message queues of rank {} "
                                     "changed between the samples",
                                     cycle, r);
                return e;
            }
        }
    }
    e.confirmed = true;
    e.text = fmt::format("the cycle in all {} samples, and no MPI message of rank {} sent or matched between them "
                         "(Open MPI's message sequence numbers and queues unchanged)",
                         snaps.size(), of_ranks);
    return e;
}

verdict decide(const std::vector<snapshot>& snaps, const movement& m, const cycle_evidence& cycles,
               const std::vector<std::string>& findings) {
    const snapshot& last = snaps.back();
    verdict v;
    std::string detail = findings.empty() ? "" : "; " + findings.front();
    if (cycles.confirmed) {
        std::set<int> ranks;
        for (const auto& c : last.deadlock.cycles) {
            ranks.insert(c.ranks.begin(), c.ranks.end());
        }
        v = {"deadlock",
             fmt::format("deadlock: rank {} wait on each other: {}; {}", format_rank_list({ranks.begin(), ranks.end()}),
                         last.deadlock.cycles.front().describe(), cycles.text),
             triage_deadlock};
        return v;
    }
    // A cycle that is not a deadlock is said, after what was found instead.
    std::string cycle_note = cycles.any ? "; " + cycles.text : "";
    if (last.kind == "core") {
        if (crash_signal(last.core_signal) && !last.procs.empty()) {
            const process_view& p = last.procs.front();
            std::string where;
            for (const auto& t : p.threads) {
                if (t.tid == last.core_tid && !t.where.empty()) {
                    where = fmt::format(" in thread {} at {}", t.number, t.where);
                }
            }
            return {"crashed",
                    fmt::format("crashed: {} was killed by {}{}{}",
                                p.rank >= 0 ? fmt::format("rank {} (process {})", p.rank, p.pid)
                                            : fmt::format("process {}", p.pid),
                                signal_name(last.core_signal), where, detail),
                    triage_crashed};
        }
        std::string stop = last.core_signal != 0
                               ? fmt::format(" (it was stopped by {} when the core was written, no crash)",
                                             signal_name(last.core_signal))
                               : "";
        if (cycles.any) {
            return {"snapshot", cycles.text + detail, triage_nothing_wrong};
        }
        return {"snapshot", "no deadlock found in the core" + stop + detail, triage_nothing_wrong};
    }
    if (snaps.size() >= 2) {
        double span = m.span;
        std::string spinning = busy_waiting(last, m);
        std::string measured = fmt::format("in {} samples over {:.1f} s", snaps.size(), span);
        if (m.messages_readable) {
            // Messages that still move at the end: the job progresses, however busy its
            // ranks look while they wait.
            std::vector<int> ranks;
            std::uint64_t total = 0;
            for (const auto& [rank, n] : m.messages_last) {
                if (n > 0) {
                    ranks.push_back(rank);
                }
                total += m.messages.at(rank);
            }
            if (!ranks.empty()) {
                return {"progressing",
                        fmt::format("progressing: busy-waiting, making progress: rank {} sent or matched {} MPI "
                                    "messages {} (Open MPI's message sequence numbers){}{}",
                                    format_rank_list(ranks), total, measured,
                                    spinning.empty() ? "" : "; " + spinning, cycle_note),
                        triage_nothing_wrong};
            }
        }
        std::string no_messages =
            m.messages_readable ? "; no MPI message moved (Open MPI's message sequence numbers unchanged)"
            : last.mpi && last.procs.size() > 1 ? "; MPI messages not counted (" + m.messages_note + ")"
                                                : "";
        if (m.moved.empty() && !m.cpu_starved.empty()) {
            // The threads that should show movement got no CPU time to move: standing still
            // proves nothing, so this is no hang (a verdict is a promise).
            std::set<int> ranks;
            for (const auto& [rank, tid] : m.cpu_starved) {
                ranks.insert(rank);
            }
            std::string of = last.mpi && last.procs.size() > 1
                                 ? fmt::format(" of rank {}", format_rank_list({ranks.begin(), ranks.end()}))
                                 : "";
            return {"inconclusive",
                    fmt::format("inconclusive: no thread moved {}, but {}{} in the program's own code stayed "
                                "runnable and got no CPU time (the machine is busy): not called a hang; sample "
                                "again with a longer --interval{}{}",
                                measured, count_text(m.cpu_starved.size(), "thread"), of, no_messages, cycle_note),
                    triage_nothing_wrong};
        }
        if (m.moved.empty()) {
            return {"hang",
                    fmt::format("hang: no thread moved {}: every stack unchanged{}{}{}{}", measured,
                                spinning.empty() ? "" : "; " + spinning + " without progress", no_messages,
                                cycle_note, detail),
                    triage_hang};
        }
        std::string where = last.mpi && last.procs.size() > 1
                                ? fmt::format(" (rank {})", format_rank_list({m.moved_ranks.begin(), m.moved_ranks.end()}))
                                : "";
        std::size_t total = 0;
        for (const auto& p : last.procs) {
            total += p.threads.size();
        }
        return {"progressing",
                fmt::format("progressing: {} of {} threads moved{} {} (their stacks changed or they woke up){}{}{}",
                            m.moved.size(), total, where, measured, spinning.empty() ? "" : "; " + spinning,
                            no_messages, cycle_note),
                triage_nothing_wrong};
    }
    if (cycles.any) {
        return {"snapshot", cycles.text + detail, triage_nothing_wrong};
    }
    return {"snapshot", "no deadlock found in one snapshot (--samples N tells a hang from progress)" + detail,
            triage_nothing_wrong};
}

}  // namespace ompdbg::debugger::triage
