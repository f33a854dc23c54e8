// What a client must not be able to do to the adapter: requests out of order, unknown
// commands, malformed JSON and headers, a program that does not exist, a disconnect in the
// middle of a stop. Each gets an error the user can read; nothing crashes, hangs or stays traced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { examples, sources, start_adapter, stop_adapter, launch_to_breakpoint, line_of, wait_for_output, process_alive } from './support.mjs';

function frame(json) {
    return `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

test('a request before initialize and an unknown request get error responses', async () => {
    const a = await start_adapter();
    try {
        await assert.rejects(a.dc.threadsRequest(), /'threads' before 'initialize'/);
        await a.dc.initializeRequest();
        await assert.rejects(a.dc.customRequest('frobnicate', {}), /unknown request 'frobnicate'/);
        const threads = await a.dc.threadsRequest();
        assert.deepEqual(threads.body.threads, []);
    } finally {
        const how = await stop_adapter(a);
        assert.equal(how.code, 0);
    }
});

test('malformed JSON and a header without Content-Length are reported, and the adapter goes on', async () => {
    const a = await start_adapter();
    try {
        await a.dc.initializeRequest();
        a.raw(frame('{"seq": 5, "type": "request", "command": '));
        await wait_for_output(a, 'stderr', 'malformed JSON');
        a.raw('X-Nonsense: 12\r\n\r\n');
        await wait_for_output(a, 'stderr', 'without Content-Length');
        a.raw(frame('[1, 2, 3]'));
        await wait_for_output(a, 'stderr', 'must be a JSON object');
        a.raw('Content-Length: lots\r\n\r\n');
        await wait_for_output(a, 'stderr', 'bad Content-Length');
        // Still in step with the stream: a well-formed request is answered.
        const threads = await a.dc.threadsRequest();
        assert.equal(threads.success, true);
    } finally {
        const how = await stop_adapter(a);
        assert.equal(how.code, 0);
    }
});

test('launching a program that does not exist fails with a clear message', async () => {
    const a = await start_adapter();
    try {
        await assert.rejects(a.dc.launch({ program: '/nonexistent/prog' }), /cannot launch \/nonexistent\/prog: .*No such file or directory/);
        await assert.rejects(a.dc.launch({}), /launch needs "program"/);
    } finally {
        const how = await stop_adapter(a);
        assert.equal(how.code, 0);
    }
});

test('a disconnect while the program is stopped kills it and the adapter ends', async () => {
    const a = await start_adapter();
    const stopped = await launch_to_breakpoint(a, { program: path.join(examples, 'structs') },
        path.join(sources, 'structs.c'), line_of('structs.c', 'after_locals'));
    const pid = stopped.body.threadId;   // the only thread: its LWP is the process id
    assert.ok(process_alive(pid));
    await a.dc.disconnectRequest({});
    const how = await a.exited;
    assert.equal(how.code, 0);
    assert.equal(process_alive(pid), false, `process ${pid} is gone`);
});
