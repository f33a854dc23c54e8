// The simulated cluster of the remote tests (tests/cluster/) leaves nothing behind when the
// process that made it is killed before it can clean up (ctest's timeout, a crash): each
// host's init holds a FIFO whose only writer is its owner, and ends when that closes.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "cli_common.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;

namespace {

std::string cluster_script(const char* name) {
    return (std::filesystem::path(examples_source_dir) / ".." / "tests" / "cluster" / name).lexically_normal().string();
}

}  // namespace

TEST_CASE("a simulated host ends with the process that made it, when that process is SIGKILLed before its cleanup",
          "[infra][remote]") {
    char templ[] = "/tmp/ompdbg-lifeline-XXXXXX";
    REQUIRE(::mkdtemp(templ));
    std::string dir = templ;
    std::string init = (std::filesystem::path(targets_dir) / ".." / "cluster" / "ompdbg-host-init").lexically_normal().string();
    // The owner: a shell that holds the FIFO open for writing (as simulated_cluster does),
    // starts a host (which does not inherit the descriptor), says the host init's pid, and
    // is then SIGKILLed without a host-down.
    std::string script = "mkfifo \"$OMPDBG_CLUSTER_DIR/owner\" && exec 3<>\"$OMPDBG_CLUSTER_DIR/owner\" && "
                         "export OMPDBG_CLUSTER_OWNER=\"$OMPDBG_CLUSTER_DIR/owner\" && " +
                         cluster_script("host-up") + " lifeline1 3>&- && kill -KILL $$";
    auto r = run({"bash", "-c", script}, run_options()
                                             .set_env("OMPDBG_CLUSTER_DIR", dir)
                                             .set_env("OMPDBG_HOST_INIT", init)
                                             .timeout_after(std::chrono::seconds(30)));
    INFO(r.all());
    CHECK(r.term_signal == SIGKILL);
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"((\d+)\s*$)")));
    pid_t ipid = std::stoi(m[1]);
    // The init (as this machine sees it) ends on its own: wait for it through a pidfd, at
    // most 10 s. It is gone already when pidfd_open fails with ESRCH.
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, ipid, 0));
    bool ended = fd < 0 && errno == ESRCH;
    if (fd >= 0) {
        pollfd p{fd, POLLIN, 0};
        ended = ::poll(&p, 1, 10000) == 1;
        ::close(fd);
    }
    if (!ended) {
        ::kill(ipid, SIGKILL);   // leave nothing behind even when the check fails
    }
    CHECK(ended);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}
