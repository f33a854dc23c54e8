// An MPI job launched through its starter (mpirun as the program): every rank's threads in
// one session, named "rank N: ...", a breakpoint in every rank, the job run to its end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { cache, examples, sources, start_adapter, stop_adapter, launch_to_breakpoint, line_of, wait_for_output, process_alive, tracer_of } from './support.mjs';

const mpirun = path.join(cache, 'openmpi-4.1.4', 'bin', 'mpirun');
const program = path.join(examples, 'mpi', 'mpi_stages');
const source = path.join(sources, 'mpi', 'mpi_stages.c');
const have_mpi = fs.existsSync(mpirun) && fs.existsSync(program);

test('a 2-rank job: pending breakpoint resolved in every rank, threads named by rank, run to the end',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const a = await start_adapter();
    try {
        const line = line_of('mpi/mpi_stages.c', 'compute_sink');
        const changed = a.dc.waitForEvent('breakpoint');
        const first = await launch_to_breakpoint(a, {
            program: mpirun,
            args: ['--allow-run-as-root', '--oversubscribe', '-np', '2', program],
        }, source, line, true);
        // Pending until the ranks were acquired, then resolved: the client is told.
        const bp = (await changed).body;
        assert.equal(bp.reason, 'changed');
        assert.equal(bp.breakpoint.verified, true);
        assert.equal(bp.breakpoint.line, line);

        const stopped_threads = [];
        const threads = (await a.dc.threadsRequest()).body.threads;
        for (const r of [0, 1]) {
            assert.ok(threads.some((t) => t.name.startsWith(`rank ${r}: Thread 1 `)), JSON.stringify(threads));
        }
        assert.ok(threads.every((t) => /^rank [01]: /.test(t.name)), JSON.stringify(threads));

        // Each rank stops once at the breakpoint, in its own thread, with its own rank.
        const ranks = [];
        for (const ev of [first, null]) {
            let stop = ev;
            if (!stop) {
                const next = a.dc.waitForEvent('stopped');
                await a.dc.continueRequest({ threadId: first.body.threadId });
                stop = await next;
            }
            assert.equal(stop.body.reason, 'breakpoint');
            const frames = (await a.dc.stackTraceRequest({ threadId: stop.body.threadId })).body.stackFrames;
            assert.equal(frames[0].name, 'compute', `stopped ${JSON.stringify(stop.body)}; console: ${a.output_text('console')}; stdout: ${a.output_text('stdout')}; threads: ${JSON.stringify((await a.dc.threadsRequest()).body.threads)}`);
            assert.equal(frames[0].line, line);
            const rank = await a.dc.evaluateRequest({ expression: 'rank', context: 'watch', frameId: frames[0].id });
            ranks.push(Number(rank.body.result));
            stopped_threads.push(stop.body.threadId);
        }
        assert.deepEqual(ranks.sort(), [0, 1]);

        // The console runs a command in every rank of the focus.
        const repl = await a.dc.evaluateRequest({ expression: 'print my_rank', context: 'repl' });
        assert.match(repl.body.result, /\[rank 0\]\n\$\d+ = 0\n\[rank 1\]\n\$\d+ = 1/);

        const exited = a.dc.waitForEvent('exited');
        const terminated = a.dc.waitForEvent('terminated');
        await a.dc.continueRequest({ threadId: first.body.threadId });
        assert.equal((await exited).body.exitCode, 0);
        await terminated;
        await wait_for_output(a, 'stdout', 'rank 0 done');
        await wait_for_output(a, 'stdout', 'rank 1 done');
        // What the ranks say of themselves: their pids are the threads that stopped.
        const pids = [...a.output_text('stdout').matchAll(/rank (\d) of 2 pid (\d+)/g)].map((m) => Number(m[2]));
        assert.deepEqual(stopped_threads.sort(), pids.sort());
        for (const pid of pids) {
            assert.equal(process_alive(pid), false, `rank process ${pid} ended`);
        }
    } finally {
        await stop_adapter(a);
    }
});

test('a parked 2-rank job: each thread\'s stack, variables and locals are its own rank\'s',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const a = await start_adapter();
    try {
        // Rank 0 stops in all_parked() once rank 1 is inside park(): where each rank is,
        // is known, so a stack of the wrong rank cannot pass.
        const line = line_of('mpi/mpi_stages.c', 'all_parked');
        const stop = await launch_to_breakpoint(a, {
            program: mpirun,
            args: ['--allow-run-as-root', '--oversubscribe', '-np', '2', program, 'park'],
        }, source, line, true);
        assert.equal(stop.body.reason, 'breakpoint');
        const threads = (await a.dc.threadsRequest()).body.threads;
        const main_of = (r) => threads.find((t) => t.name.startsWith(`rank ${r}: Thread 1 `));
        assert.equal(main_of(0).id, stop.body.threadId, JSON.stringify(threads));

        const root = (await a.dc.stackTraceRequest({ threadId: main_of(0).id })).body.stackFrames;
        assert.equal(root[0].name, 'all_parked');
        assert.equal(root[1].name, 'park_root');
        const parked = (await a.dc.stackTraceRequest({ threadId: main_of(1).id })).body.stackFrames;
        const names = parked.map((f) => f.name);
        assert.ok(!names.includes('all_parked') && !names.includes('park_root'), JSON.stringify(names));
        const park = parked.find((f) => f.name === 'park');
        assert.ok(park, JSON.stringify(names));
        assert.ok(names.includes('wait_odd'), JSON.stringify(names));

        // A variable and the locals of a frame of rank 1 are rank 1's, rank 0's are rank 0's.
        const rank1 = await a.dc.evaluateRequest({ expression: 'rank', context: 'watch', frameId: park.id });
        assert.equal(rank1.body.result, '1');
        const size0 = await a.dc.evaluateRequest({ expression: 'size', context: 'hover', frameId: root[1].id });
        assert.equal(size0.body.result, '2');
        const scopes = (await a.dc.scopesRequest({ frameId: park.id })).body.scopes;
        const args = scopes.find((s) => s.name === 'Arguments');
        assert.ok(args, JSON.stringify(scopes));
        const vars = (await a.dc.variablesRequest({ variablesReference: args.variablesReference })).body.variables;
        assert.deepEqual(vars.map((v) => [v.name, v.value]), [['rank', '1']]);

        // The console acts on every rank of the focus: releasing them ends the job.
        const repl = await a.dc.evaluateRequest({ expression: 'print released = 1', context: 'repl' });
        assert.match(repl.body.result, /\[rank 0\]\n\$\d+ = 1\n\[rank 1\]\n\$\d+ = 1/);
        const exited = a.dc.waitForEvent('exited');
        await a.dc.continueRequest({ threadId: stop.body.threadId });
        assert.equal((await exited).body.exitCode, 0);
        await wait_for_output(a, 'stdout', 'rank 1 done');
    } finally {
        await stop_adapter(a);
    }
});

test('a function breakpoint set while a 2-rank job runs stops it there, without a pause the client did not ask for',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const a = await start_adapter();
    try {
        const stop = await launch_to_breakpoint(a, {
            program: mpirun,
            args: ['--allow-run-as-root', '--oversubscribe', '-np', '2', program, 'park'],
        }, source, line_of('mpi/mpi_stages.c', 'all_parked'), true);
        const stops = [];
        a.dc.on('stopped', (e) => stops.push(e.body));
        // Both ranks spin in spin(): usleep over and over, until `released` is set.
        await a.dc.continueRequest({ threadId: stop.body.threadId });
        const hit = a.dc.waitForEvent('stopped');
        const set = await a.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'spin' }, { name: 'usleep' }] });
        assert.deepEqual(set.body.breakpoints.map((b) => b.verified), [true, true], JSON.stringify(set.body));
        const ev = (await hit).body;
        assert.equal(ev.reason, 'breakpoint', JSON.stringify(ev));
        assert.deepEqual(ev.hitBreakpointIds, [set.body.breakpoints[1].id]);
        assert.deepEqual(stops.map((s) => s.reason), ['breakpoint']);
        const frames = (await a.dc.stackTraceRequest({ threadId: ev.threadId })).body.stackFrames;
        assert.ok(frames.some((f) => f.name === 'spin'), JSON.stringify(frames.map((f) => f.name)));

        // Released and cleared, the job runs to its end.
        await a.dc.evaluateRequest({ expression: 'print released = 1', context: 'repl' });
        await a.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
        const exited = a.dc.waitForEvent('exited');
        await a.dc.continueRequest({ threadId: ev.threadId });
        assert.equal((await exited).body.exitCode, 0);
    } finally {
        await stop_adapter(a);
    }
});

test('attach to a running mpirun: its ranks are acquired, pause shows each rank\'s stack, the job runs to its end',
    { skip: have_mpi ? false : `no ${mpirun} (scripts/bootstrap openmpi) or ${program}` }, async () => {
    const job = spawn(mpirun, ['--allow-run-as-root', '--oversubscribe', '-np', '2', program, 'park'],
        { stdio: ['ignore', 'pipe', 'ignore'] });
    let printed = '';
    job.stdout.on('data', (d) => { printed += d.toString(); });
    const a = await start_adapter();
    try {
        await new Promise((resolve) => {
            const t = setInterval(() => {
                if (/rank 0 of 2/.test(printed) && /rank 1 of 2/.test(printed)) { clearInterval(t); resolve(); }
            }, 20);
        });
        await Promise.all([a.dc.configurationSequence(), a.dc.initializeRequest().then(() => a.dc.attachRequest({ pid: job.pid }))]);
        const pids = Object.fromEntries([...printed.matchAll(/rank (\d) of 2 pid (\d+)/g)].map((m) => [m[1], Number(m[2])]));
        for (const r of ['0', '1']) {
            assert.equal(tracer_of(pids[r]), a.adapter.pid, `rank ${r} traced by the adapter`);
        }
        const stopped = a.dc.waitForEvent('stopped');
        await a.dc.pauseRequest({ threadId: pids['0'] });
        await stopped;
        const threads = (await a.dc.threadsRequest()).body.threads;
        for (const r of ['0', '1']) {
            const main = threads.find((t) => t.name.startsWith(`rank ${r}: Thread 1 `));
            assert.ok(main, JSON.stringify(threads));
            assert.equal(main.id, pids[r]);
            const names = (await a.dc.stackTraceRequest({ threadId: main.id })).body.stackFrames.map((f) => f.name);
            assert.ok(names.includes(r === '0' ? 'park_root' : 'park'), `rank ${r}: ${names.join(' ')}`);
        }
        const repl = await a.dc.evaluateRequest({ expression: 'print released = 1', context: 'repl' });
        assert.match(repl.body.result, /\[rank 0\]\n\$\d+ = 1\n\[rank 1\]\n\$\d+ = 1/);
        const exited = a.dc.waitForEvent('exited');
        await a.dc.continueRequest({ threadId: pids['0'] });
        assert.equal((await exited).body.exitCode, 0);
        await new Promise((resolve) => { const t = setInterval(() => { if (/rank 1 done/.test(printed)) { clearInterval(t); resolve(); } }, 20); });
    } finally {
        job.kill('SIGKILL');
        await stop_adapter(a);
    }
});
