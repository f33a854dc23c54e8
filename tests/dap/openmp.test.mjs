// An OpenMP program in the editor: a breakpoint inside a nested parallel region, the
// threads with their OpenMP numbers and states, the folded stack with the regions as label
// frames, the locals with their data-sharing, the ICVs, a console command, the run to the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { examples, sources, start_adapter, stop_adapter, launch_to_breakpoint, line_of, wait_for_output } from './support.mjs';

const program = path.join(examples, 'openmp', 'omp_nested');
const source = path.join(sources, 'openmp', 'omp_nested.c');

test('a breakpoint in a nested OpenMP region shows OpenMP threads, regions, data-sharing and ICVs', async () => {
    const a = await start_adapter();
    try {
        const line = line_of('openmp/omp_nested.c', 'nested-checkpoint');
        const stopped = await launch_to_breakpoint(a, { program }, source, line);
        assert.equal(stopped.body.reason, 'breakpoint');
        const tid = stopped.body.threadId;

        // Six threads (2 outer x 3 inner), each named with its OpenMP thread number and state.
        const threads = (await a.dc.threadsRequest()).body.threads;
        assert.equal(threads.length, 6, JSON.stringify(threads));
        for (const t of threads) {
            assert.match(t.name, /^OMP [0-2] · \S/, JSON.stringify(threads));
        }
        assert.ok(threads.some((t) => t.id === tid), 'the stopped thread is listed');

        // The stack: the user's frames, the runtime folded away, both regions as label frames.
        const frames = (await a.dc.stackTraceRequest({ threadId: tid })).body.stackFrames;
        assert.equal(frames[0].line, line);
        assert.equal(frames[0].source.path, source);
        const labels = frames.filter((f) => f.presentationHint === 'label').map((f) => f.name);
        assert.deepEqual(labels.map((l) => l.replace(/ · .*/, '')), [
            `#pragma omp parallel at omp_nested.c:${line_of('openmp/omp_nested.c', 'nested-inner')}`,
            `#pragma omp parallel at omp_nested.c:${line_of('openmp/omp_nested.c', 'nested-outer')}`,
        ]);
        assert.match(labels[0], /thread 0 of 3/);
        // The labels whole: the construct, where it is, the thread's number in each team.
        assert.deepEqual(labels, [
            `#pragma omp parallel at omp_nested.c:${line_of('openmp/omp_nested.c', 'nested-inner')} · thread 0 of 3`,
            `#pragma omp parallel at omp_nested.c:${line_of('openmp/omp_nested.c', 'nested-outer')} · thread 0 of 2`,
        ]);
        assert.equal(frames[frames.length - 1].name, 'main');
        assert.ok(!frames.some((f) => /__kmp/.test(f.name)), 'no runtime frame is shown: ' + frames.map((f) => f.name));

        // `set omp-bt-filter off` in the console shows the runtime's frames, as `bt` then does.
        await a.dc.evaluateRequest({ expression: 'set omp-bt-filter off', context: 'repl' });
        const raw = (await a.dc.stackTraceRequest({ threadId: tid })).body.stackFrames;
        assert.ok(!raw.some((f) => f.presentationHint === 'label'), JSON.stringify(raw.map((f) => f.name)));
        assert.ok(raw.some((f) => /__kmp/.test(f.name)), JSON.stringify(raw.map((f) => f.name)));
        assert.ok(raw.length > frames.length, JSON.stringify(raw.map((f) => f.name)));
        await a.dc.evaluateRequest({ expression: 'set omp-bt-filter on', context: 'repl' });

        // Every other thread waits in a team of the inner region: its stack ends at that
        // region's label (a team member's frames above it are its encountering thread's).
        for (const t of threads.filter((t) => t.id !== tid)) {
            const theirs = (await a.dc.stackTraceRequest({ threadId: t.id })).body.stackFrames;
            const their_labels = theirs.filter((f) => f.presentationHint === 'label').map((f) => f.name);
            const where = JSON.stringify(theirs.map((f) => f.name));
            assert.match(their_labels[0] ?? '', new RegExp(`^#pragma omp parallel at omp_nested\\.c:${line_of('openmp/omp_nested.c', 'nested-inner')} · thread [0-2] of 3$`), where);
            assert.ok(theirs.some((f) => f.name === 'wait_for_release'), where);
            assert.ok(!theirs.some((f) => /__kmp/.test(f.name)), where);
        }

        // Locals by their source names with their data-sharing, and the ICVs. The routine's
        // own parameters are the runtime's: an outlined region has no Arguments scope.
        const scopes = (await a.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
        assert.deepEqual(scopes.map((s) => s.name), ['Locals', 'ICVs'], JSON.stringify(scopes));
        const locals_scope = scopes.find((s) => s.name === 'Locals');
        const locals = (await a.dc.variablesRequest({ variablesReference: locals_scope.variablesReference })).body.variables;
        const by_name = Object.fromEntries(locals.map((v) => [v.name, v.value]));
        assert.equal(by_name.inner, '0  (private)', JSON.stringify(locals));
        assert.equal(by_name.outer, '0  (shared)', JSON.stringify(locals));
        const hints = Object.fromEntries(locals.map((v) => [v.name, v.presentationHint?.attributes]));
        assert.deepEqual(hints.inner, ['private'], JSON.stringify(locals));
        assert.deepEqual(hints.outer, ['shared'], JSON.stringify(locals));
        const icv_scope = scopes.find((s) => s.name === 'ICVs');
        assert.ok(icv_scope, 'an ICVs scope: ' + JSON.stringify(scopes));
        const icvs = (await a.dc.variablesRequest({ variablesReference: icv_scope.variablesReference })).body.variables;
        const icv = Object.fromEntries(icvs.map((v) => [v.name, v.value]));
        assert.equal(icv['max-active-levels-var'], '2', JSON.stringify(icvs));
        assert.equal(icv['team-size-var'], '3', JSON.stringify(icvs));
        // Each ICV's type is the scope OMPD reads it at.
        const icv_type = Object.fromEntries(icvs.map((v) => [v.name, v.type]));
        assert.equal(icv_type['team-size-var'], 'parallel', JSON.stringify(icvs));
        assert.equal(icv_type['stacksize-var'], 'address_space', JSON.stringify(icvs));
        await assert.rejects(a.dc.setVariableRequest({ variablesReference: icv_scope.variablesReference, name: 'team-size-var', value: '4' }),
                             /ICVs are read-only/);

        // A private variable written from the Variables view.
        const set = await a.dc.setVariableRequest({ variablesReference: locals_scope.variablesReference, name: 'inner', value: '0 * 7' });
        assert.equal(set.body.value, '0');

        // Watch and console.
        const watch = await a.dc.evaluateRequest({ expression: 'inner + 40', context: 'watch', frameId: frames[0].id });
        assert.equal(watch.body.result, '40');
        const repl = await a.dc.evaluateRequest({ expression: 'omp threads', context: 'repl', frameId: frames[0].id });
        assert.match(repl.body.result, /ompt_state_work_parallel/);
        assert.equal(repl.body.result.split('\n').filter((l) => /^\*? +\d+ +\d+ +[0-2] /.test(l)).length, 6, repl.body.result);

        // To the end: the program's own output, exited 0, terminated.
        const exited = a.dc.waitForEvent('exited');
        const terminated = a.dc.waitForEvent('terminated');
        await a.dc.continueRequest({ threadId: tid });
        assert.equal((await exited).body.exitCode, 0);
        await terminated;
        await wait_for_output(a, 'stdout', 'truth: regions=3');
    } finally {
        const how = await stop_adapter(a);
        assert.equal(how.code, 0, 'ompdbg dap exits with status 0; stderr: ' + a.stderr());
    }
});
