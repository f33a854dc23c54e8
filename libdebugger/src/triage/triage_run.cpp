// `ompdbg triage`'s samples and what is drawn from them. Each sample is a gather
// (triage_gather.cpp); several (--samples) tell threads that move from threads that hang, as
// STAT's sampling does, and the verdict weighs what moved (triage_verdict.cpp).

#include "ompdbg/debugger/triage/triage_model.hpp"

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger::triage {

report run(session& s, const request& r) {
    report rep;
    {
        // The detached processes' objects outlive every sample (gather), not the session.
        std::vector<std::unique_ptr<inferior>> graveyard;
        for (int i = 0; i < r.samples; ++i) {
            if (i > 0) {
                std::this_thread::sleep_for(std::chrono::duration<double>(r.interval));
            }
            try {
                rep.snaps.push_back(gather(r, s, graveyard));
            } catch (const std::exception& e) {
                rep.gather_error = e.what();
                s.end_target();
                break;
            }
        }
    }
    if (rep.snaps.empty()) {
        rep.result = {"gather-failed", rep.gather_error, triage_gather_failed};
        return rep;
    }
    rep.moved = compare(rep.snaps);
    rep.findings = openmp_findings(rep.snaps.back());
    for (auto& f : mpi_findings(rep.snaps, rep.moved)) {
        rep.findings.push_back(std::move(f));
    }
    rep.cycles = weigh_cycles(rep.snaps, rep.moved);
    rep.result = decide(rep.snaps, rep.moved, rep.cycles, rep.findings);
    return rep;
}

}  // namespace ompdbg::debugger::triage
