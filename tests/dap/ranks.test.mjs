// One child debug session per MPI rank (startDebugging): a client that announces
// supportsStartDebuggingRequest is asked for one session per rank once the job's ranks are
// acquired; it starts a second `ompdbg dap` per rank with the configuration it got, as VS
// Code does, and each session shows its rank: its threads, its stops, its variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
    cache, examples, sources, start_adapter, stop_adapter, line_of, wait_for_output, process_alive,
    tracer_of, children_of, reverse_requests, initialize_with_children, TIMEOUT,
} from './support.mjs';

const mpirun = path.join(cache, 'openmpi-4.1.4', 'bin', 'mpirun');
const program = path.join(examples, 'mpi', 'mpi_stages');
const source = path.join(sources, 'mpi', 'mpi_stages.c');
const have_mpi = fs.existsSync(mpirun) && fs.existsSync(program);

/// The first event `name` of session `s`, as DebugClient.waitForEvent, but awaited only by
/// the steps that expect it (a session that disconnects first never gets `terminated`): its
/// timeout neither keeps node running nor rejects unawaited.
function first_event(s, name) {
    const p = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event '${name}' after ${TIMEOUT} ms`)), TIMEOUT);
        timer.unref();
        s.dc.once(name, (e) => { clearTimeout(timer); resolve(e); });
    });
    p.catch(() => {});
    return p;
}

/// A rank's session as the client starts it: a new adapter, initialize, attach with the
/// configuration the parent gave, configurationDone. `stopped` resolves with its first stop.
async function start_rank_session(configuration) {
    const s = await start_adapter();
    await s.dc.initializeRequest(initialize_with_children);
    const initialized = s.dc.waitForEvent('initialized');
    await s.dc.attachRequest(configuration);
    await initialized;
    s.stopped = first_event(s, 'stopped');
    s.terminated = first_event(s, 'terminated');
    await s.dc.configurationDoneRequest();
    return s;
}

test('a 2-rank job under a client that starts sessions: one session per rank, each with its rank\'s threads, stops and variables',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const parent = await start_adapter();
    const reverse = reverse_requests(parent);
    const sessions = {};
    let stray;
    try {
        const line = line_of('mpi/mpi_stages.c', 'compute_sink');
        await parent.dc.initializeRequest(initialize_with_children);
        const initialized = parent.dc.waitForEvent('initialized');
        await parent.dc.launchRequest({
            type: 'ompdbg', program: mpirun,
            args: ['--allow-run-as-root', '--oversubscribe', '-np', '2', program],
        });
        await initialized;
        await parent.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line }] });
        const parent_first = parent.dc.waitForEvent('stopped');
        await parent.dc.configurationDoneRequest();

        // One startDebugging request per rank, each an attach named `rank N`.
        const asked = [await reverse.next(), await reverse.next()];
        for (const r of asked) {
            assert.equal(r.command, 'startDebugging');
            assert.equal(r.arguments.request, 'attach');
            reverse.respond(r);
        }
        const configurations = asked.map((r) => r.arguments.configuration);
        assert.deepEqual(configurations.map((c) => c.name).sort(), ['rank 0', 'rank 1']);
        assert.ok(configurations.every((c) => c.type === 'ompdbg' && c.request === 'attach'), JSON.stringify(configurations));
        const socket = configurations[0].ompdbgParent;
        const mode = fs.statSync(path.dirname(socket)).mode & 0o777;
        assert.equal(mode, 0o700, `${path.dirname(socket)} is private`);
        assert.equal(fs.statSync(socket).mode & 0o777, 0o600);

        // A rank the job does not have is refused by the parent, through the relay.
        stray = await start_adapter();
        await stray.dc.initializeRequest(initialize_with_children);
        await assert.rejects(stray.dc.attachRequest({ ...configurations[0], name: 'rank 7', rank: 7 }),
            /attach to a rank needs "rank": one of the job's ranks \(0, 1\)/);
        await stop_adapter(stray);
        stray = undefined;

        for (const c of configurations) {
            sessions[c.rank] = await start_rank_session(c);
        }
        const first = (await parent_first).body;
        assert.equal(first.reason, 'breakpoint');
        const starters = children_of(parent.adapter.pid);   // mpirun
        assert.ok(starters.length > 0);

        // Each configuration names its rank's process (the ranks say the same on their stdout, below).
        const pids = Object.fromEntries(configurations.map((c) => [c.rank, c.pid]));
        for (const rank of [0, 1]) {
            assert.equal(tracer_of(pids[rank]), parent.adapter.pid, `rank ${rank} is traced by the parent only`);
        }

        // Each session lists its own rank's threads, without the `rank N:` prefix; the
        // parent lists them all.
        for (const rank of [0, 1]) {
            const threads = (await sessions[rank].dc.threadsRequest()).body.threads;
            assert.ok(threads.length > 0);
            assert.ok(threads.some((t) => t.id === pids[rank] && t.name.startsWith('Thread 1 ')), JSON.stringify(threads));
            for (const t of threads) {
                assert.ok(fs.existsSync(`/proc/${pids[rank]}/task/${t.id}`), `thread ${t.id} of rank ${rank}: ${JSON.stringify(threads)}`);
                assert.ok(!t.name.startsWith('rank '), t.name);
            }
        }
        const all = (await parent.dc.threadsRequest()).body.threads;
        assert.ok(all.some((t) => t.name.startsWith('rank 0: ')) && all.some((t) => t.name.startsWith('rank 1: ')), JSON.stringify(all));

        // The rank that hit the breakpoint has the stop in its session; the other rank's
        // session shows its rank stopped with the job.
        const hit_rank = Object.entries(pids).find(([, pid]) => pid === first.threadId)[0];
        const other_rank = hit_rank === '0' ? '1' : '0';
        const hit = (await sessions[hit_rank].stopped).body;
        assert.equal(hit.reason, 'breakpoint');
        assert.equal(hit.threadId, first.threadId);
        assert.deepEqual(hit.hitBreakpointIds, first.hitBreakpointIds);
        const along = (await sessions[other_rank].stopped).body;
        assert.equal(along.reason, 'pause');
        assert.equal(along.threadId, pids[other_rank]);

        // Its stack and a variable of its rank, in its session.
        const check_stop = async (s, rank, tid) => {
            const frames = (await s.dc.stackTraceRequest({ threadId: tid })).body.stackFrames;
            assert.equal(frames[0].name, 'compute');
            assert.equal(frames[0].line, line);
            const value = await s.dc.evaluateRequest({ expression: 'rank', context: 'watch', frameId: frames[0].id });
            assert.equal(value.body.result, String(rank));
            const scopes = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
            const args = scopes.find((x) => x.name === 'Arguments');
            const vars = (await s.dc.variablesRequest({ variablesReference: args.variablesReference })).body.variables;
            assert.deepEqual(vars.map((v) => [v.name, v.value]), [['rank', String(rank)]]);
            // The session's console acts on its rank only.
            const repl = await s.dc.evaluateRequest({ expression: 'print my_rank', context: 'repl' });
            assert.match(repl.body.result, new RegExp(`\\$\\d+ = ${rank}$`));
            assert.ok(!repl.body.result.includes(`[rank ${1 - rank}]`), repl.body.result);
        };
        await check_stop(sessions[hit_rank], Number(hit_rank), first.threadId);

        // A client sends its breakpoints to every session: the same set from a rank's
        // session keeps the job's breakpoint and its id.
        const again = await sessions[hit_rank].dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line }] });
        assert.deepEqual(again.body.breakpoints.map((b) => [b.id, b.verified, b.line]), [[first.hitBreakpointIds[0], true, line]]);

        // Continue from the rank's session: the whole job runs (the parent and the other
        // session are told), and the other rank stops at the breakpoint, in its session.
        const parent_continued = parent.dc.waitForEvent('continued');
        const other_continued = sessions[other_rank].dc.waitForEvent('continued');
        const second_in_other = sessions[other_rank].dc.waitForEvent('stopped');
        const second_in_parent = parent.dc.waitForEvent('stopped');
        await sessions[hit_rank].dc.continueRequest({ threadId: first.threadId });
        await parent_continued;
        await other_continued;
        const second = (await second_in_other).body;
        assert.equal(second.reason, 'breakpoint');
        assert.equal(second.threadId, pids[other_rank]);
        assert.equal((await second_in_parent).body.threadId, pids[other_rank]);
        await check_stop(sessions[other_rank], Number(other_rank), second.threadId);

        // A rank's session that disconnects leaves the job as it is.
        await sessions[hit_rank].dc.disconnectRequest({});
        assert.equal((await sessions[hit_rank].exited).code, 0);
        assert.equal(tracer_of(pids[hit_rank]), parent.adapter.pid);
        const still = (await parent.dc.threadsRequest()).body.threads;
        assert.ok(still.some((t) => t.id === pids[hit_rank]), JSON.stringify(still));

        // A rank's session that dies does not hurt the job or the other sessions.
        const doomed = await start_rank_session(configurations.find((c) => String(c.rank) === hit_rank));
        doomed.adapter.kill('SIGKILL');
        await doomed.exited;
        const alive = (await sessions[other_rank].dc.threadsRequest()).body.threads;
        assert.ok(alive.some((t) => t.id === pids[other_rank]), JSON.stringify(alive));

        // To the end: `terminated` in every session still open, the ranks gone.
        const exited = parent.dc.waitForEvent('exited');
        const terminated = parent.dc.waitForEvent('terminated');
        await parent.dc.continueRequest({ threadId: second.threadId });
        assert.equal((await exited).body.exitCode, 0);
        await terminated;
        await sessions[other_rank].terminated;
        await wait_for_output(parent, 'stdout', 'rank 0 done');
        await wait_for_output(parent, 'stdout', 'rank 1 done');
        const printed = Object.fromEntries([...parent.output_text('stdout').matchAll(/rank (\d) of 2 pid (\d+)/g)]
            .map((m) => [Number(m[1]), Number(m[2])]));
        assert.deepEqual(printed, pids);
        for (const rank of [0, 1]) {
            assert.equal(process_alive(pids[rank]), false, `rank ${rank} (${pids[rank]}) ended`);
        }
        await stop_adapter(sessions[other_rank]);
        const how = await stop_adapter(parent);
        assert.equal(how.code, 0);
        for (const pid of starters) {
            assert.equal(process_alive(pid), false, `starter ${pid} ended`);
        }
        assert.equal(fs.existsSync(socket), false, 'the socket is removed');
        assert.equal(fs.existsSync(path.dirname(socket)), false, 'its directory is removed');
    } finally {
        for (const s of [stray, ...Object.values(sessions)]) {
            if (s) {
                await stop_adapter(s);
            }
        }
        await stop_adapter(parent);
    }
});

test('a rank session whose configuration names no live parent fails its attach with a clear message', async () => {
    const a = await start_adapter();
    try {
        await a.dc.initializeRequest(initialize_with_children);
        await assert.rejects(a.dc.attachRequest({ name: 'rank 0', request: 'attach', rank: 0, ompdbgParent: '/nonexistent/ompdbg-dap-x/ranks' }),
            /cannot reach the debug session of rank 0 at \/nonexistent\/ompdbg-dap-x\/ranks: No such file or directory/);
        // A socket path that is no socket at all, or not a string.
        await assert.rejects(a.dc.attachRequest({ request: 'attach', rank: 1, ompdbgParent: 12 }),
            /"ompdbgParent" must be the path of the socket/);
        // The server goes on as one without a parent.
        const threads = await a.dc.threadsRequest();
        assert.deepEqual(threads.body.threads, []);
    } finally {
        const how = await stop_adapter(a);
        assert.equal(how.code, 0);
    }
});

test('a parent that ends takes its rank sessions with it',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const parent = await start_adapter();
    const reverse = reverse_requests(parent);
    const sessions = [];
    try {
        await parent.dc.initializeRequest(initialize_with_children);
        const initialized = parent.dc.waitForEvent('initialized');
        await parent.dc.launchRequest({ program: mpirun, args: ['--allow-run-as-root', '--oversubscribe', '-np', '2', program, 'park'] });
        await initialized;
        await parent.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line: line_of('mpi/mpi_stages.c', 'all_parked') }] });
        const stopped = parent.dc.waitForEvent('stopped');
        await parent.dc.configurationDoneRequest();
        const pids = [];
        for (let i = 0; i < 2; ++i) {
            const r = await reverse.next();
            reverse.respond(r);
            pids.push(r.arguments.configuration.pid);
            sessions.push(await start_rank_session(r.arguments.configuration));
        }
        await stopped;
        for (const s of sessions) {
            await s.stopped;
        }
        for (const pid of pids) {
            assert.equal(tracer_of(pid), parent.adapter.pid);
        }
        // The parent's disconnect kills the job it launched; every rank session is told.
        await parent.dc.disconnectRequest({});
        assert.equal((await parent.exited).code, 0);
        for (const s of sessions) {
            await s.terminated;
            // Its requests now fail with a message; its disconnect ends it.
            await assert.rejects(s.dc.threadsRequest(), /the debug session of the MPI job has ended/);
            await s.dc.disconnectRequest({});
            assert.equal((await s.exited).code, 0);
        }
        for (const pid of pids) {
            assert.equal(process_alive(pid), false, `rank process ${pid} ended`);
        }
    } finally {
        for (const s of sessions) {
            await stop_adapter(s);
        }
        await stop_adapter(parent);
    }
});

test('attach to a running mpirun under a client that starts sessions: one session per rank, pause from a rank\'s session stops the job',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const job = spawn(mpirun, ['--allow-run-as-root', '--oversubscribe', '-np', '2', program, 'park'],
        { stdio: ['ignore', 'pipe', 'ignore'] });
    let printed = '';
    job.stdout.on('data', (d) => { printed += d.toString(); });
    const parent = await start_adapter();
    const reverse = reverse_requests(parent);
    const sessions = {};
    try {
        await new Promise((resolve) => {
            const t = setInterval(() => {
                if (/rank 0 of 2/.test(printed) && /rank 1 of 2/.test(printed)) { clearInterval(t); resolve(); }
            }, 20);
        });
        const pids = Object.fromEntries([...printed.matchAll(/rank (\d) of 2 pid (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]));
        await parent.dc.initializeRequest(initialize_with_children);
        const initialized = parent.dc.waitForEvent('initialized');
        await parent.dc.attachRequest({ type: 'ompdbg', pid: job.pid });
        await initialized;
        for (let i = 0; i < 2; ++i) {
            const r = await reverse.next();
            reverse.respond(r);
            const c = r.arguments.configuration;
            assert.equal(c.pid, pids[c.rank], JSON.stringify(c));
            sessions[c.rank] = await start_rank_session(c);
        }
        // The parent's configurationDone resumes the job: the rank sessions are told.
        const continued = [first_event(sessions[0], 'continued'), first_event(sessions[1], 'continued')];
        await parent.dc.configurationDoneRequest();
        await Promise.all(continued);

        // `pause` in rank 1's session stops the whole job; each session shows its rank.
        const parent_stop = parent.dc.waitForEvent('stopped');
        await sessions[1].dc.pauseRequest({ threadId: pids[1] });
        assert.equal((await parent_stop).body.reason, 'pause');
        for (const rank of [0, 1]) {
            const stop = (await sessions[rank].stopped).body;
            assert.equal(stop.reason, 'pause');
            assert.ok(fs.existsSync(`/proc/${pids[rank]}/task/${stop.threadId}`), `a thread of rank ${rank}: ${JSON.stringify(stop)}`);
            const names = (await sessions[rank].dc.stackTraceRequest({ threadId: pids[rank] })).body.stackFrames.map((f) => f.name);
            assert.ok(names.includes(rank === 0 ? 'park_root' : 'park'), `rank ${rank}: ${names.join(' ')}`);
        }

        // Released from the parent's console, continued from a rank's session: the job ends.
        const repl = await parent.dc.evaluateRequest({ expression: 'print released = 1', context: 'repl' });
        assert.match(repl.body.result, /\[rank 0\]\n\$\d+ = 1\n\[rank 1\]\n\$\d+ = 1/);
        const exited = parent.dc.waitForEvent('exited');
        await sessions[0].dc.continueRequest({ threadId: pids[0] });
        assert.equal((await exited).body.exitCode, 0);
        for (const rank of [0, 1]) {
            await sessions[rank].terminated;
        }
    } finally {
        job.kill('SIGKILL');
        for (const s of Object.values(sessions)) {
            await stop_adapter(s);
        }
        await stop_adapter(parent);
    }
});
