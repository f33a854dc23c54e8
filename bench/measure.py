"""How bench/run measures: one tool run once (wall time, peak RSS, its output checked), the
workload base class, and the two ways a workload turns runs into a value (a whole run, or a
per-operation difference of two runs)."""

import os
import re
import signal
import subprocess
import tempfile
import threading
import time

class BenchError(Exception):
    pass


# ---- running one tool once --------------------------------------------------------------

class Sample:
    def __init__(self, seconds, rss_kb, output):
        self.seconds = seconds
        self.rss_kb = rss_kb
        self.output = output


def run_once(argv, env=None, timeout=120, expect=None, stdin=subprocess.DEVNULL):
    """Runs argv to its end; wall time, peak RSS (wait4's ru_maxrss: the tool and the
    children it reaped) and its output. `expect` (regex) must match the output, else the
    tool did not do the work and the sample is an error."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=stdin, env=full_env,
                                 start_new_session=True)
        except OSError as e:
            raise BenchError(f"cannot run {argv[0]}: {e}") from e
        timed_out = []

        def on_timeout():
            timed_out.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, on_timeout)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        elapsed = time.perf_counter() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        # A debugger that died may leave its inferior behind in the same session.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out.seek(0)
        text = out.read().decode(errors="replace")
    if timed_out:
        raise BenchError(f"timed out after {timeout}s: {' '.join(argv)}\n{text[-2000:]}")
    if expect and not re.search(expect, text, re.M):
        raise BenchError(f"exit {p.returncode}, output lacks /{expect}/: {' '.join(argv)}\n{text[-3000:]}")
    return Sample(elapsed, ru.ru_maxrss, text)


def write_script(tmpdir, name, lines):
    path = os.path.join(tmpdir, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# ---- the workloads ------------------------------------------------------------------------

class Workload:
    """One row group of the table. `cases(ctx)` returns {tool: measure} where a measure is
    a callable returning (value_seconds, rss_kb): the value is the wall time of the whole
    run, or a per-operation time for differential workloads."""
    number = 0
    title = ""
    unit = "s total"
    target = ""
    # (tool, kind, bound): the ratio ompdbg/tool must be <= bound ("le") or its inverse >= bound
    goals = []

    def setup(self, ctx):
        pass

    def teardown(self, ctx):
        pass


def total(argv, env=None, expect=None, timeout=180):
    def measure():
        s = run_once(argv, env=env, expect=expect, timeout=timeout)
        return s.seconds, s.rss_kb
    return measure


def differential(make_argv, k, env=None, expect=None, timeout=180, verify=None):
    """Per-operation time: the same session with k operations and with none, back to back;
    (T_k - T_0) / k. Start-up and the run to the breakpoint cancel out. `verify` checks
    what the full session produced (raises BenchError)."""
    def expect_for(reps):
        return expect(reps) if callable(expect) else expect

    def measure():
        base = run_once(make_argv(0), env=env, expect=expect_for(0), timeout=timeout)
        full = run_once(make_argv(k), env=env, expect=expect_for(k), timeout=timeout)
        if verify:
            verify(full)
        return (full.seconds - base.seconds) / k, full.rss_kb
    return measure


def nm_offset(binary, symbol):
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == symbol:
            return parts[0]
    raise BenchError(f"{symbol} not in {binary}")
