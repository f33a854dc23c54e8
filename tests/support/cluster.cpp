// The simulated cluster of the tests (cluster.hpp) over tests/cluster/host-up, host-down
// and rsh.
#include "cluster.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "ompdbg_test_paths.hpp"

namespace ompdbg::test {

namespace {

// tests/cluster/ in the sources, and the host init built into tests/cluster/ (derived
// from the generated paths, which every test includes).
std::string script(const char* name) {
    return (std::filesystem::path(examples_source_dir) / ".." / "tests" / "cluster" / name).lexically_normal().string();
}
std::string host_init() {
    return (std::filesystem::path(targets_dir) / ".." / "cluster" / "ompdbg-host-init").lexically_normal().string();
}

/// Single quotes for bash, so that a word reaches the host's shell unchanged.
std::string quoted(const std::string& word) {
    std::string out = "'";
    for (char c : word) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

}  // namespace

simulated_cluster::simulated_cluster(const std::vector<std::string>& hosts,
                                     const std::vector<std::string>& without_gdbserver) {
    char templ[] = "/tmp/ompdbg-cluster-XXXXXX";
    if (!::mkdtemp(templ)) {
        throw std::runtime_error("cannot make the cluster's state directory");
    }
    dir_ = templ;
    // The hosts' lifeline (host_init.c): their inits end when this descriptor closes, so a
    // test killed before this destructor runs leaves no host behind. Close-on-exec: only
    // this process holds it.
    std::string owner = dir_ + "/owner";
    if (::mkfifo(owner.c_str(), 0600) != 0 || (owner_fd_ = ::open(owner.c_str(), O_RDWR | O_CLOEXEC)) < 0) {
        throw std::runtime_error("cannot make the cluster's owner FIFO " + owner);
    }
    for (auto& h : hosts) {
        std::vector<std::string> argv{script("host-up")};
        for (auto& w : without_gdbserver) {
            if (w == h) {
                argv.insert(argv.end(), {"--without", "gdbserver"});
            }
        }
        argv.push_back(h);
        auto r = run(argv, options(run_options().timeout_after(30s)));
        if (!r.ok()) {
            throw std::runtime_error("host-up " + h + " failed: " + r.all());
        }
        hosts_.push_back(h);
    }
}

simulated_cluster::~simulated_cluster() {
    // SIGKILL from here first (no exception, no script needed), then host-down for the rest.
    for (auto& h : hosts_) {
        if (pid_t p = init_pid(h); p > 0) {
            ::kill(p, SIGKILL);
        }
    }
    std::vector<std::string> argv{script("host-down")};
    argv.insert(argv.end(), hosts_.begin(), hosts_.end());
    run(argv, options(run_options().timeout_after(30s)));
    if (owner_fd_ >= 0) {
        ::close(owner_fd_);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string simulated_cluster::rsh() const { return script("rsh"); }

std::string simulated_cluster::agent(const std::string& host) const {
    return "| " + rsh() + " " + host + " gdbserver --multi -";
}

run_options simulated_cluster::options(run_options base) const {
    base.set_env("OMPDBG_CLUSTER_DIR", dir_);
    base.set_env("OMPDBG_HOST_INIT", host_init());
    base.set_env("OMPDBG_CLUSTER_OWNER", dir_ + "/owner");
    return base;
}

void simulated_cluster::export_environment() const {
    ::setenv("OMPDBG_CLUSTER_DIR", dir_.c_str(), 1);
    ::setenv("OMPDBG_HOST_INIT", host_init().c_str(), 1);
    ::setenv("OMPDBG_CLUSTER_OWNER", (dir_ + "/owner").c_str(), 1);
}

std::vector<std::string> simulated_cluster::on_host(const std::string& host, const std::vector<std::string>& argv) const {
    // setsid: the program leads its process group, which gdbserver interrupts with
    // kill(-pid, SIGINT) (an attached process that leads none cannot be interrupted).
    std::string cmd = "echo $$; exec setsid";
    for (auto& a : argv) {
        cmd += " " + quoted(a);
    }
    return {rsh(), host, cmd};
}

pid_t simulated_cluster::init_pid(const std::string& host) const {
    std::ifstream in(dir_ + "/" + host + ".pid");
    pid_t p = 0;
    in >> p;
    return p;
}

}  // namespace ompdbg::test
