// A C program in the editor: stop on entry, step over, children of structs, arrays and
// pointers, setVariable, conditions, hit counts and logpoints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { examples, sources, start_adapter, stop_adapter, launch_to_breakpoint, line_of, wait_for_output } from './support.mjs';

const program = path.join(examples, 'structs');
const source = path.join(sources, 'structs.c');

async function top_frame(a, tid) {
    return (await a.dc.stackTraceRequest({ threadId: tid })).body.stackFrames[0];
}

async function locals_of(a, frame_id) {
    const scopes = (await a.dc.scopesRequest({ frameId: frame_id })).body.scopes;
    const locals = scopes.find((s) => s.name === 'Locals');
    return (await a.dc.variablesRequest({ variablesReference: locals.variablesReference })).body.variables;
}

async function children(a, v) {
    assert.ok(v.variablesReference > 0, `${v.name} has children`);
    return (await a.dc.variablesRequest({ variablesReference: v.variablesReference })).body.variables;
}

/// cxx_std stopped at its return: its locals by name.
async function cxx_std_locals(a) {
    const cxx = path.join(sources, 'cxx_std.cpp');
    const stopped = await launch_to_breakpoint(a, { program: path.join(examples, 'cxx_std') }, cxx, line_of('cxx_std.cpp', 'cxx_std_return'));
    const frame = await top_frame(a, stopped.body.threadId);
    return Object.fromEntries((await locals_of(a, frame.id)).map((x) => [x.name, x]));
}

test('stopOnEntry stops at main, and next steps over one line', async () => {
    const a = await start_adapter();
    try {
        const stopped = a.dc.waitForEvent('stopped');
        await Promise.all([a.dc.configurationSequence(), a.dc.launch({ program, stopOnEntry: true })]);
        const entry = await stopped;
        assert.equal(entry.body.reason, 'entry');
        const f0 = await top_frame(a, entry.body.threadId);
        assert.equal(f0.name, 'main');
        assert.equal(f0.line, line_of('structs.c', 'main_start'));

        const stepped = a.dc.waitForEvent('stopped');
        await a.dc.nextRequest({ threadId: entry.body.threadId });
        assert.equal((await stepped).body.reason, 'step');
        assert.equal((await top_frame(a, entry.body.threadId)).line, line_of('structs.c', 'main_start') + 1);
    } finally {
        await stop_adapter(a);
    }
});

test('structs, arrays and pointers have children; setVariable writes a local', async () => {
    const a = await start_adapter();
    try {
        const stopped = await launch_to_breakpoint(a, { program }, source, line_of('structs.c', 'after_locals'));
        const tid = stopped.body.threadId;
        const frame = await top_frame(a, tid);
        const locals = await locals_of(a, frame.id);
        const v = Object.fromEntries(locals.map((x) => [x.name, x]));

        const p = Object.fromEntries((await children(a, v.p)).map((x) => [x.name, x.value]));
        assert.deepEqual(p, { x: '3', y: '4' });
        const r = await children(a, v.r);
        const size = r.find((x) => x.name === 'size');
        assert.deepEqual((await children(a, size)).map((x) => x.value), ['3', '4']);
        assert.deepEqual((await children(a, v.local_array)).map((x) => `${x.name}=${x.value}`),
            ['[0]=10', '[1]=20', '[2]=30', '[3]=40', '[4]=50']);
        const pointee = await children(a, v.pp);
        assert.equal(pointee.length, 1);
        assert.equal((await children(a, pointee[0])).map((x) => x.value).join(','), '3,4');

        const locals_scope = (await a.dc.scopesRequest({ frameId: frame.id })).body.scopes.find((s) => s.name === 'Locals');
        const set = await a.dc.setVariableRequest({ variablesReference: locals_scope.variablesReference, name: 'local_int', value: '41 + 1' });
        assert.equal(set.body.value, '42');
        const check = await a.dc.evaluateRequest({ expression: 'local_int', context: 'hover', frameId: frame.id });
        assert.equal(check.body.result, '42');

        // The program prints what it computes from the value written.
        const exited = a.dc.waitForEvent('exited');
        await a.dc.continueRequest({ threadId: tid });
        await exited;
        await wait_for_output(a, 'stdout', '**ipp = 42');
    } finally {
        await stop_adapter(a);
    }
});

test('a conditional breakpoint stops where its condition holds, a hit count on the N-th hit', async () => {
    const a = await start_adapter();
    try {
        const line = line_of('structs.c', 'loop_body');
        const stopped = a.dc.waitForEvent('stopped');
        await Promise.all([
            a.dc.waitForEvent('initialized').then(async () => {
                const r = await a.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line, condition: 'i == 7' }] });
                assert.equal(r.body.breakpoints[0].verified, true);
                return a.dc.configurationDoneRequest();
            }),
            a.dc.launch({ program }),
        ]);
        const first = await stopped;
        const frame = await top_frame(a, first.body.threadId);
        const i = await a.dc.evaluateRequest({ expression: 'i', context: 'watch', frameId: frame.id });
        assert.equal(i.body.result, '7');

        // Replaced by a breakpoint that stops on its third hit from now on.
        await a.dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line, hitCondition: '2' }] });
        const again = a.dc.waitForEvent('stopped');
        await a.dc.continueRequest({ threadId: first.body.threadId });
        const second = await again;
        const f2 = await top_frame(a, second.body.threadId);
        assert.equal((await a.dc.evaluateRequest({ expression: 'i', context: 'watch', frameId: f2.id })).body.result, '9');
    } finally {
        await stop_adapter(a);
    }
});

test('a logpoint prints its message with values and does not stop', async () => {
    const a = await start_adapter();
    try {
        const line = line_of('structs.c', 'loop_body');
        let stops = 0;
        a.dc.on('stopped', () => { stops += 1; });
        const exited = a.dc.waitForEvent('exited');
        await Promise.all([
            a.dc.waitForEvent('initialized').then(async () => {
                const r = await a.dc.setBreakpointsRequest({
                    source: { path: source },
                    breakpoints: [{ line, logMessage: 'i={i} total={loop_total}' }],
                });
                assert.equal(r.body.breakpoints[0].verified, true);
                return a.dc.configurationDoneRequest();
            }),
            a.dc.launch({ program }),
        ]);
        assert.equal((await exited).body.exitCode, 0);
        const text = await wait_for_output(a, 'console', 'i=9 ');
        const lines = text.split('\n').filter((l) => l.startsWith('i='));
        assert.deepEqual(lines.slice(0, 3), ['i=0 total=0', 'i=1 total=0', 'i=2 total=20']);
        assert.equal(lines.length, 10);
        assert.equal(stops, 0);
        await wait_for_output(a, 'stdout', 'loop_total = ');
    } finally {
        await stop_adapter(a);
    }
});

test('a std::vector has its elements as children; a std::string has none', async () => {
    const a = await start_adapter();
    try {
        const v = await cxx_std_locals(a);
        assert.equal(v.ints.value, 'std::vector of length 3, capacity 3 = {1, 2, 3}');
        assert.deepEqual((await children(a, v.ints)).map((x) => `${x.name}=${x.value}`), ['[0]=1', '[1]=2', '[2]=3']);
        assert.deepEqual((await children(a, v.words)).map((x) => x.value), ['"alpha"', '"beta"']);
        const points = await children(a, v.points);
        assert.deepEqual((await children(a, points[1])).map((x) => `${x.name}=${x.value}`), ['x=3', 'y=4']);
        assert.equal(v.word.value, '"hello world"');
        assert.equal(v.word.variablesReference, 0);
    } finally {
        await stop_adapter(a);
    }
});

test('base classes, std::map, std::list and pointers open as print shows them; their parts open too', async () => {
    const a = await start_adapter();
    try {
        const v = await cxx_std_locals(a);
        const shown = (list) => list.map((x) => `${x.name}=${x.value}`);
        // A derived class: its base as `<base>` (as print shows `<base> = {id = 3}`), then its own fields.
        const d = await children(a, v.d);
        assert.deepEqual(shown(d), ['<base>={id = 3}', 'r=1.5']);
        assert.deepEqual(shown(await children(a, d[0])), ['id=3']);
        assert.equal(d[1].evaluateName, '(d).r');
        // std::map entries by key, std::list elements by position.
        assert.deepEqual(shown(await children(a, v.ages)), ['["ann"]=31', '["bob"]=42']);
        assert.deepEqual(shown(await children(a, v.queue)), ['[0]=9', '[1]=8', '[2]=7']);
        const by_id = await children(a, v.by_id);
        assert.equal(by_id[0].name, '[1]');
        assert.deepEqual(shown(await children(a, by_id[0])).slice(0, 1), ['id=5']);
        const nested = await children(a, v.nested);
        assert.deepEqual(shown(await children(a, nested[0])), ['[0]=7', '[1]=8']);
        // A pointer to a class opens to the object, its base class part first.
        const sp = await children(a, v.sp);
        assert.equal(sp.length, 1);
        assert.equal(sp[0].name, '*sp');
        const object = await children(a, sp[0]);
        assert.ok(object.some((x) => x.name === 'id' && x.value === '7'), JSON.stringify(object));
        // Empty containers have nothing to open.
        assert.equal(v.no_queue.variablesReference, 0);
    } finally {
        await stop_adapter(a);
    }
});

test('disassemble around a frame\'s pc, with the instructions before it, and readMemory of a global', async () => {
    const a = await start_adapter();
    try {
        const stopped = await launch_to_breakpoint(a, { program }, source, line_of('structs.c', 'after_locals'));
        const frame = await top_frame(a, stopped.body.threadId);
        const pc = BigInt(frame.instructionPointerReference);
        const dis = (await a.dc.customRequest('disassemble', {
            memoryReference: frame.instructionPointerReference, instructionOffset: -300, instructionCount: 320,
        })).body.instructions;
        assert.equal(dis.length, 320);
        assert.equal(BigInt(dis[300].address), pc);
        // x/i $pc says the same of the instruction at the pc.
        const xi = (await a.dc.evaluateRequest({ expression: 'x/i $pc', context: 'repl', frameId: frame.id })).body.result;
        assert.ok(xi.includes(dis[300].instruction), `${xi} / ${dis[300].instruction}`);
        // The real instructions are contiguous up to the pc: none was decoded out of step.
        const real = dis.slice(0, 301).filter((i) => i.presentationHint !== 'invalid');
        for (let i = 0; i + 1 < real.length; ++i) {
            const size = BigInt(real[i].instructionBytes.split(' ').length);
            assert.equal(BigInt(real[i].address) + size, BigInt(real[i + 1].address), JSON.stringify(real.slice(i, i + 2)));
        }
        // main starts among them, where its symbol says.
        const main = dis.find((i) => i.symbol === 'main');
        const main_addr = (await a.dc.evaluateRequest({ expression: '(unsigned long)&main', context: 'watch', frameId: frame.id })).body.result;
        assert.ok(main, 'main starts within the 300 instructions before the pc');
        assert.equal(BigInt(main.address), BigInt(main_addr));
        assert.ok(dis.some((i) => i.line === line_of('structs.c', 'after_locals') && i.location.path === source), 'source lines');

        const addr = (await a.dc.evaluateRequest({ expression: '(unsigned long)&global_number', context: 'watch', frameId: frame.id })).body.result;
        const mem = (await a.dc.customRequest('readMemory', { memoryReference: '0x' + BigInt(addr).toString(16), count: 4 })).body;
        assert.equal(BigInt(mem.address), BigInt(addr));
        assert.deepEqual([...Buffer.from(mem.data, 'base64')], [0x44, 0x43, 0x42, 0x41]);
        const bad = await a.dc.customRequest('readMemory', { memoryReference: '0x8', count: 16 }).then(
            (r) => r.body, (e) => ({ error: e.message }));
        assert.equal(bad.unreadableBytes, 16, JSON.stringify(bad));
    } finally {
        await stop_adapter(a);
    }
});

test('modules: the program and its libraries, announced by module events as they load', async () => {
    const a = await start_adapter();
    try {
        const events = [];
        a.dc.on('module', (e) => events.push(e.body));
        await launch_to_breakpoint(a, { program }, source, line_of('structs.c', 'after_locals'));
        const list = (await a.dc.customRequest('modules', {})).body;
        const by_name = Object.fromEntries(list.modules.map((m) => [m.name, m]));
        assert.equal(list.totalModules, list.modules.length);
        assert.equal(by_name.structs.path, program);
        assert.equal(by_name.structs.symbolStatus, 'Symbols loaded.');
        assert.ok(list.modules.some((m) => m.name === 'libc.so.6'), JSON.stringify(list.modules.map((m) => m.name)));
        assert.match(by_name.structs.addressRange, /^0x[0-9a-f]+-0x[0-9a-f]+$/);
        // Each was announced once, as new.
        const announced = events.filter((e) => e.reason === 'new').map((e) => e.module.path).sort();
        assert.deepEqual(announced, list.modules.map((m) => m.path).sort());
        const page = (await a.dc.customRequest('modules', { startModule: 1, moduleCount: 1 })).body;
        assert.deepEqual(page.modules, [list.modules[1]]);
    } finally {
        await stop_adapter(a);
    }
});
