// The agent features `ompdbg doctor --host` asks of a gdbserver (doctor_remote.cpp): a real
// gdbserver announces them all (tests/e2e/doctor_remote.cpp); an older or partial agent is
// named by what it lacks, as gdbserver spells it in qSupported.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ompdbg/debugger/doctor/doctor.hpp"

using ompdbg::debugger::missing_agent_features;

namespace {

ompdbg::tracer::rsp::features complete() {
    ompdbg::tracer::rsp::features f;
    f.multiprocess = f.xfer_features = f.xfer_threads = f.xfer_libraries_svr4 = f.xfer_auxv = f.xfer_exec_file =
        f.vcont = f.non_stop = true;
    return f;
}

}  // namespace

TEST_CASE("doctor: an agent announcing every feature ompdbg needs lacks nothing", "[cli][doctor]") {
    CHECK(missing_agent_features(complete()).empty());
}

TEST_CASE("doctor: an agent without libraries-svr4 or exec-file is named by those features", "[cli][doctor]") {
    auto f = complete();
    f.xfer_libraries_svr4 = false;
    f.xfer_exec_file = false;
    CHECK(missing_agent_features(f) ==
          std::vector<std::string>{"qXfer:libraries-svr4:read+", "qXfer:exec-file:read+"});
}

TEST_CASE("doctor: an agent without the multiprocess extensions or non-stop mode is named by them", "[cli][doctor]") {
    auto f = complete();
    f.multiprocess = false;
    f.non_stop = false;
    CHECK(missing_agent_features(f) == std::vector<std::string>{"multiprocess+", "QNonStop+"});
}
