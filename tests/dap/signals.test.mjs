// Signals as exceptions: a fault stops the program (reason exception, the signal named);
// with the filter off a signal goes through to the program's handler; terminate ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { examples, start_adapter, stop_adapter, line_of, wait_for_output, process_alive } from './support.mjs';

const crash = path.join(examples, 'crash');

async function launch(a, args, filters) {
    await Promise.all([
        a.dc.waitForEvent('initialized').then(async () => {
            await a.dc.setExceptionBreakpointsRequest({ filters });
            return a.dc.configurationDoneRequest();
        }),
        a.dc.launch({ program: crash, args }),
    ]);
}

test('a SIGSEGV stops the program as an exception where it faults; terminate kills it', async () => {
    const a = await start_adapter();
    try {
        const stopped = a.dc.waitForEvent('stopped');
        await launch(a, ['segv'], ['fatal-signals']);
        const ev = await stopped;
        assert.equal(ev.body.reason, 'exception');
        assert.equal(ev.body.text, 'SIGSEGV');
        const frames = (await a.dc.stackTraceRequest({ threadId: ev.body.threadId })).body.stackFrames;
        assert.equal(frames[0].name, 'do_segv');
        assert.equal(frames[0].line, line_of('crash.c', 'segv'));

        const terminated = a.dc.waitForEvent('terminated');
        await a.dc.terminateRequest({});
        await terminated;
        assert.equal(process_alive(ev.body.threadId), false);
    } finally {
        await stop_adapter(a);
    }
});

test('with the other-signals filter off, SIGUSR1 reaches the program without a stop', async () => {
    const a = await start_adapter();
    try {
        let stops = 0;
        a.dc.on('stopped', () => { stops += 1; });
        const exited = a.dc.waitForEvent('exited');
        await launch(a, ['usr1'], ['fatal-signals']);
        assert.equal((await exited).body.exitCode, 0);
        await wait_for_output(a, 'stdout', 'handler: got signal 10');
        assert.equal(stops, 0);
    } finally {
        await stop_adapter(a);
    }
});
