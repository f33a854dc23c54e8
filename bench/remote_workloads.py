"""Workloads 12 and 13 (issue 18): the same debugging work on processes of other hosts,
reached through gdbserver agents, against the same work on this host. The hosts are the
test suite's simulated ones (tests/cluster: Linux namespaces sharing loopback; run as root),
made for the workload and removed after it, also when it fails. Each workload also makes
one untimed run through bench/rsp_count to report the packets and bytes of the operation."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from measure import BenchError, Workload, run_once, total

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "tests", "cluster")
RSP_COUNT = os.path.join(ROOT, "bench", "rsp_count")
MPIRUN = os.path.expanduser("~/.cache/ompdbg/openmpi-4.1.4/bin/mpirun")
# Open MPI over simulated hosts: its rsh launcher is the cluster's script, every byte on lo.
MPI_LOOPBACK = ["--mca", "oob_tcp_if_include", "lo", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"]


class SimulatedHosts:
    """Hosts NAMES for as long as the object lives (close() ends them). Each host's init
    also ends when this process dies however it dies: it holds the read side of a FIFO
    whose only writer is this object (tests/cluster/host_init.c)."""

    def __init__(self, build, names):
        init = os.path.join(build, "tests", "cluster", "ompdbg-host-init")
        if not os.path.exists(init):
            raise BenchError(f"{init} is missing (a build with the tests: make build)")
        if os.geteuid() != 0:
            raise BenchError("simulated hosts need root (Linux namespaces)")
        self.names = []
        self.dir = tempfile.mkdtemp(prefix="ompdbg-bench-cluster-")
        owner = os.path.join(self.dir, "owner")
        os.mkfifo(owner, 0o600)
        self.owner_fd = os.open(owner, os.O_RDWR | os.O_CLOEXEC)
        self.env = {"OMPDBG_CLUSTER_DIR": self.dir, "OMPDBG_HOST_INIT": init, "OMPDBG_CLUSTER_OWNER": owner}
        try:
            for name in names:
                self._script("host-up", name)
                self.names.append(name)
        except BaseException:
            self.close()
            raise

    def _script(self, script, *args):
        r = subprocess.run([os.path.join(CLUSTER, script), *args], env={**os.environ, **self.env},
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise BenchError(f"{script} {' '.join(args)}: {r.stderr.strip()}")

    @property
    def rsh(self):
        return os.path.join(CLUSTER, "rsh")

    def counting_rsh(self, stats):
        """An --rsh that counts each agent's packets and bytes into `stats`."""
        return f"{RSP_COUNT} {stats} {self.rsh}"

    def close(self):
        if self.names:
            subprocess.run([os.path.join(CLUSTER, "host-down"), *self.names], env={**os.environ, **self.env},
                           capture_output=True, timeout=60)
            self.names = []
        if self.owner_fd >= 0:
            os.close(self.owner_fd)
            self.owner_fd = -1
        shutil.rmtree(self.dir, ignore_errors=True)


def traffic(stats, agents_expected):
    """'N agents, P packets, S kB sent, R kB received' from rsp_count's lines, once every
    agent's relay has written its line (each writes when the debugger closes its side)."""
    deadline = time.time() + 30
    lines = []
    while time.time() < deadline:
        if os.path.exists(stats):
            with open(stats) as f:
                lines = f.read().splitlines()
            if len(lines) >= agents_expected:
                break
        time.sleep(0.05)
    if len(lines) < agents_expected:
        raise BenchError(f"rsp_count wrote {len(lines)} of {agents_expected} lines into {stats}")
    agents = packets = sent = received = 0
    for line in lines:
        _, p, s, r = line.split()
        agents, packets, sent, received = agents + 1, packets + int(p), sent + int(s), received + int(r)
    return f"{agents} agents, {packets} packets, {sent / 1e3:.0f} kB sent, {received / 1e3:.0f} kB received"


def stop_group(proc):
    if proc is None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def start_until_ready(argv, env, pattern, count, what):
    """Starts argv in a session of its own and reads its output until `count` lines match
    `pattern`; returns the process and those matches. A process that ends or says less is
    stopped and a BenchError."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, **env})
    try:
        return proc, wait_for_lines(proc, pattern, count, what)
    except BenchError:
        stop_group(proc)
        raise


def wait_for_lines(proc, pattern, count, what):
    found = []
    while len(found) < count:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(pattern, line)
        if m:
            found.append(m)
    if len(found) < count:
        raise BenchError(f"{what} did not start: {len(found)} of {count} ready")
    return found


class MpiRanksTwoHosts(Workload):
    """Workload 6's job (8 ranks parked a few frames deep) with its ranks on two simulated
    hosts, 4 each, mpirun on this one: ompdbg attaches to mpirun, reaches each host's ranks
    through one gdbserver per host (--rsh), merges every stack and detaches; against the
    same job with every rank on this host (ptrace)."""
    number = 12
    title = "8 MPI ranks on 2 hosts: acquire, merged stacks, detach"
    target = "<= 2x the same job on this host"
    goals = [("local", 2)]

    def setup(self, ctx):
        self.ranks = ctx.size(8, 2)
        self.prog = ctx.program("bench_mpi_ranks")
        if not os.path.exists(MPIRUN):
            raise BenchError(f"{MPIRUN} is missing (scripts/bootstrap builds it)")
        self.hosts = SimulatedHosts(ctx.build, ["node1", "node2"])
        self.hostfile = os.path.join(self.hosts.dir, "hostfile")
        with open(self.hostfile, "w") as f:
            f.write("".join(f"{h} slots={self.ranks // 2}\n" for h in self.hosts.names))
        base = [MPIRUN, "--allow-run-as-root", "--oversubscribe"] + MPI_LOOPBACK + ["-np", str(self.ranks)]
        self.remote_job = self._start(base[:3] + ["--hostfile", self.hostfile, "--mca", "plm_rsh_agent",
                                                  self.hosts.rsh] + base[3:] + [self.prog], "the job on 2 hosts")
        self.local_job = self._start(base + [self.prog], "the job on this host")

    def _start(self, argv, what):
        return start_until_ready(argv, self.hosts.env, r"ready rank \d+ of \d+ pid \d+", self.ranks, what)[0]

    def teardown(self, ctx):
        stop_group(getattr(self, "remote_job", None))
        stop_group(getattr(self, "local_job", None))
        if getattr(self, "hosts", None):
            self.hosts.close()

    def cases(self, ctx):
        everyone = f"0-{self.ranks - 1}"
        expect = rf"park \[rank {everyone}\]"
        cmds = ["--batch", "-ex", "mpi stacks", "-ex", "detach", "attach"]
        stats = os.path.join(self.hosts.dir, "w12.stats")
        run_once([ctx.ompdbg, "--rsh", self.hosts.counting_rsh(stats)] + cmds + [str(self.remote_job.pid)],
                 env=self.hosts.env, expect=expect)
        self.unit = f"s ({self.ranks} ranks; on 2 hosts: {traffic(stats, 2)})"
        return {
            "ompdbg": total([ctx.ompdbg, "--rsh", self.hosts.rsh] + cmds + [str(self.remote_job.pid)],
                            env=self.hosts.env, expect=expect),
            "local": total([ctx.ompdbg] + cmds + [str(self.local_job.pid)], expect=expect),
        }


class OmpThreadsRemote(Workload):
    """OMPD on another host: a process of 16 OpenMP threads parked on a simulated host;
    ompdbg attaches through `target extended-remote | rsh HOST gdbserver --multi -`, loads
    OMPD (every callback over the agent), lists `omp threads` and detaches; against the same
    program attached on this host."""
    number = 13
    title = "omp threads of a 16-thread process on another host"
    target = "<= 3x the same on this host"
    goals = [("local", 3)]

    def setup(self, ctx):
        self.threads = ctx.size(16, 4)
        prog = ctx.program("bench_omp_park")
        self.hosts = SimulatedHosts(ctx.build, ["node1"])
        pattern = r"ready pid (\d+) threads"
        run = f"OMP_DEBUG=enabled exec {prog} {self.threads}"
        self.remote, ready = start_until_ready([self.hosts.rsh, "node1", run], self.hosts.env, pattern, 1,
                                               "the program on node1")
        self.remote_pid = ready[0].group(1)
        self.local, ready = start_until_ready([prog, str(self.threads)], {"OMP_DEBUG": "enabled"}, pattern, 1,
                                              "the program on this host")
        self.local_pid = ready[0].group(1)

    def teardown(self, ctx):
        stop_group(getattr(self, "remote", None))
        stop_group(getattr(self, "local", None))
        if getattr(self, "hosts", None):
            self.hosts.close()

    def cases(self, ctx):
        # The last OpenMP thread's row: every thread was listed through OMPD.
        expect = rf"^\*?\s+\d+\s+\d+\s+{self.threads - 1}\s+ompt_state"
        listing = ["-ex", "omp threads", "-ex", "detach"]

        def remote(rsh):
            return [ctx.ompdbg, "--batch", "-ex", f"target extended-remote | {rsh} node1 gdbserver --multi -",
                    "-ex", f"attach {self.remote_pid}"] + listing

        stats = os.path.join(self.hosts.dir, "w13.stats")
        run_once(remote(self.hosts.counting_rsh(stats)), env=self.hosts.env, expect=expect)
        self.unit = f"s ({self.threads} threads; remote: {traffic(stats, 1)})"
        return {
            "ompdbg": total(remote(self.hosts.rsh), env=self.hosts.env, expect=expect),
            "local": total([ctx.ompdbg, "--batch"] + listing + ["attach", self.local_pid], expect=expect),
        }
