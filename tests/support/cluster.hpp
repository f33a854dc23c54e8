#pragma once
// Hosts of a cluster simulated on this machine for tests (tests/cluster/): each host its
// own UTS, PID and mount namespace, sharing the loopback network. RAII: the destructor
// ends every host it started (SIGKILL to each host's init ends all that runs there) and
// removes its state directory, also when the test failed. A test process killed before its
// destructors run leaves no host either: each host's init holds the read side of a FIFO
// whose only writer is this object, and ends when it closes (tests/cluster/host_init.c).

#include <sys/types.h>

#include <string>
#include <vector>

#include "process_runner.hpp"

namespace ompdbg::test {

class simulated_cluster {
public:
    /// Starts `hosts`; those also in `without_gdbserver` lack /usr/bin/gdbserver. Throws
    /// std::runtime_error (with host-up's message) when a host cannot be made.
    explicit simulated_cluster(const std::vector<std::string>& hosts,
                               const std::vector<std::string>& without_gdbserver = {});
    ~simulated_cluster();
    simulated_cluster(const simulated_cluster&) = delete;
    simulated_cluster& operator=(const simulated_cluster&) = delete;

    /// The ssh-like script: `rsh HOST COMMAND ARGS...`.
    std::string rsh() const;
    /// `| RSH HOST gdbserver --multi -`, for `target extended-remote`.
    std::string agent(const std::string& host) const;
    /// The environment the scripts need (the cluster's state directory), on top of `base`.
    run_options options(run_options base = {}) const;
    /// argv running `program args` on `host` through rsh; its first stdout line is the
    /// program's pid on that host (the shell prints $$, then execs the program).
    std::vector<std::string> on_host(const std::string& host, const std::vector<std::string>& argv) const;
    /// Sets that environment in this process too (tests that start the agent themselves).
    void export_environment() const;
    /// The pid, as this machine sees it, of the host's init (for tests that end a host).
    pid_t init_pid(const std::string& host) const;

private:
    std::string dir_;
    std::vector<std::string> hosts_;
    int owner_fd_ = -1;   ///< the write side of the hosts' lifeline FIFO (host_init.c)
};

}  // namespace ompdbg::test
