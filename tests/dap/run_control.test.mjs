// A running program: pause interrupts it as Ctrl-C does, attach and detach leave it running
// untraced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

import { examples, sources, start_adapter, stop_adapter, wait_for_output, line_of, process_alive, tracer_of, children_of } from './support.mjs';

const counter = path.join(examples, 'counter');

test('pause stops a running program, continue resumes it, disconnect kills it', async () => {
    const a = await start_adapter();
    try {
        await Promise.all([a.dc.configurationSequence(), a.dc.launch({ program: counter, args: ['100000'] })]);
        await wait_for_output(a, 'stdout', 'counter 3\n');
        const stopped = a.dc.waitForEvent('stopped');
        await a.dc.pauseRequest({ threadId: 0 });
        const ev = await stopped;
        assert.equal(ev.body.reason, 'pause');
        const pid = ev.body.threadId;
        const current = await a.dc.evaluateRequest({ expression: 'current', context: 'watch' });
        const n = Number(current.body.result);
        assert.ok(n >= 3, current.body.result);

        const listed = (await a.dc.threadsRequest()).body.threads;
        assert.deepEqual(listed.map((t) => t.id), [pid]);

        // Resumed, it counts on from where it was; the threads are listed while it runs.
        const again = a.dc.waitForEvent('stopped');
        await a.dc.continueRequest({ threadId: pid });
        await wait_for_output(a, 'stdout', `counter ${n + 1}\n`);
        const running = (await a.dc.threadsRequest()).body.threads;
        assert.deepEqual(running, listed);
        await wait_for_output(a, 'stdout', `counter ${n + 2}\n`);
        await a.dc.pauseRequest({ threadId: pid });
        assert.equal((await again).body.reason, 'pause');

        await a.dc.disconnectRequest({ terminateDebuggee: true });
        await a.exited;
        assert.equal(process_alive(pid), false);
    } finally {
        await stop_adapter(a);
    }
});

test('attach to a running program, then detach: it runs on, no longer traced', async () => {
    const child = spawn(counter, ['100000'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let printed = '';
    child.stdout.on('data', (d) => { printed += d.toString(); });
    const a = await start_adapter();
    try {
        await new Promise((resolve) => { const t = setInterval(() => { if (printed.includes('counter 2\n')) { clearInterval(t); resolve(); } }, 20); });
        await Promise.all([a.dc.configurationSequence(), a.dc.initializeRequest().then(() => a.dc.attachRequest({ pid: child.pid }))]);
        assert.equal(tracer_of(child.pid), a.adapter.pid);
        const stopped = a.dc.waitForEvent('stopped');
        await a.dc.pauseRequest({ threadId: child.pid });
        assert.equal((await stopped).body.reason, 'pause');
        const frames = (await a.dc.stackTraceRequest({ threadId: child.pid })).body.stackFrames;
        assert.ok(frames.some((f) => f.name === 'main'), frames.map((f) => f.name).join(' '));

        await a.dc.disconnectRequest({ terminateDebuggee: false });
        await a.exited;
        assert.equal(tracer_of(child.pid), 0);
        const before = printed.length;
        await new Promise((resolve) => { const t = setInterval(() => { if (printed.length > before + 20) { clearInterval(t); resolve(); } }, 20); });
        assert.ok(process_alive(child.pid));
    } finally {
        child.kill('SIGKILL');
        await stop_adapter(a);
    }
});

for (const how of ['disconnect', 'end of input']) {
    test(`a ${how} while the program runs stops it and kills it`, async () => {
        const a = await start_adapter();
        try {
            await Promise.all([a.dc.configurationSequence(), a.dc.launch({ program: counter, args: ['100000'] })]);
            await wait_for_output(a, 'stdout', 'counter 2\n');
            const kids = children_of(a.adapter.pid);
            assert.equal(kids.length, 1, `one program under the adapter: ${kids}`);
            if (how === 'disconnect') {
                await a.dc.disconnectRequest({});
            } else {
                a.adapter.stdin.end();
            }
            const exit = await a.exited;
            assert.equal(exit.code, 0);
            assert.equal(process_alive(kids[0]), false, `program ${kids[0]} is gone`);
        } finally {
            await stop_adapter(a);
        }
    });
}

test('a breakpoint set while the program runs hits without a stop the client did not ask for', async () => {
    const a = await start_adapter();
    try {
        const stops = [];
        a.dc.on('stopped', (e) => stops.push(e.body));
        await Promise.all([a.dc.configurationSequence(), a.dc.launch({ program: counter, args: ['100000'] })]);
        await wait_for_output(a, 'stdout', 'counter 3\n');
        const source = path.join(sources, 'counter.c');
        const hit = a.dc.waitForEvent('stopped');
        const set = await a.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line: line_of('counter.c', 'print') }] });
        assert.equal(set.body.breakpoints[0].verified, true, JSON.stringify(set.body));
        const ev = (await hit).body;
        assert.equal(ev.reason, 'breakpoint');
        assert.deepEqual(ev.hitBreakpointIds, [set.body.breakpoints[0].id]);
        assert.deepEqual(stops.map((s) => s.reason), ['breakpoint'], 'no pause before the hit');
        assert.ok(!a.output_text('console').includes('SIGINT'), a.output_text('console'));
        // It stopped in the next print_counter: n is the count after the last one printed.
        const printed = [...a.output_text('stdout').matchAll(/counter (\d+)\n/g)].map((m) => Number(m[1]));
        const frames = (await a.dc.stackTraceRequest({ threadId: ev.threadId })).body.stackFrames;
        const scopes = (await a.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
        const args = (await a.dc.variablesRequest({ variablesReference: scopes.find((s) => s.name === 'Arguments').variablesReference })).body.variables;
        assert.equal(Number(args.find((v) => v.name === 'n').value), printed[printed.length - 1] + 1);

        // Cleared while it runs: it counts on, and no stop comes.
        const again = a.dc.waitForEvent('stopped');
        await a.dc.continueRequest({ threadId: ev.threadId });
        const n = printed[printed.length - 1] + 1;
        await wait_for_output(a, 'stdout', `counter ${n}\n`);
        const cleared = await a.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [] });
        assert.deepEqual(cleared.body.breakpoints, []);
        await wait_for_output(a, 'stdout', `counter ${n + 3}\n`);
        assert.equal(stops.length, 1, JSON.stringify(stops));
        await a.dc.pauseRequest({ threadId: ev.threadId });
        assert.equal((await again).body.reason, 'pause');
        await a.dc.disconnectRequest({ terminateDebuggee: true });
        await a.exited;
    } finally {
        await stop_adapter(a);
    }
});
