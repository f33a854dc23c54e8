// Shared by the DAP tests: where ompdbg and the example programs are (from ctest's
// environment), and a DebugClient (@vscode/debugadapter-testsupport) driving `ompdbg dap`
// over the adapter's own stdin/stdout.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

// The client comes from the bootstrap cache (scripts/bootstrap dap), else from an
// `npm ci` in this directory.
const client_dir = process.env.OMPDBG_DAP_CLIENT_DIR;
const require = createRequire(client_dir && fs.existsSync(path.join(client_dir, 'node_modules'))
    ? path.join(client_dir, 'package.json') : import.meta.url);
let DebugClient;
try {
    ({ DebugClient } = require('@vscode/debugadapter-testsupport'));
} catch (e) {
    throw new Error(`the DAP test client is not installed in ${client_dir}: run scripts/bootstrap dap (${e.message})`);
}

export const ompdbg = process.env.OMPDBG_BINARY;
export const examples = process.env.OMPDBG_EXAMPLES_DIR;
export const sources = process.env.OMPDBG_EXAMPLES_SOURCE_DIR;
export const cache = process.env.OMPDBG_CACHE_DIR;

/// How long one protocol round may take on a loaded 2-core machine.
export const TIMEOUT = 60000;

/// A DebugClient connected to a fresh `ompdbg dap`; `adapter` is its process, `raw` writes
/// bytes straight to its stdin (for malformed messages).
export async function start_adapter() {
    const adapter = spawn(ompdbg, ['dap'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    adapter.stderr.on('data', (d) => { stderr += d.toString(); });
    const state = { done: false };
    const exited = new Promise((resolve) => adapter.on('exit', (code, signal) => { state.done = true; resolve({ code, signal }); }));
    const dc = new DebugClient('', '', 'ompdbg');
    dc.defaultTimeout = TIMEOUT;
    dc.connect(adapter.stdout, adapter.stdin);
    const outputs = [];
    dc.on('output', (e) => outputs.push(e.body));
    return {
        dc,
        adapter,
        state,
        exited,
        outputs,
        stderr: () => stderr,
        raw: (text) => adapter.stdin.write(text),
        /// The text of every output event of `category` so far.
        output_text: (category) => outputs.filter((o) => o.category === category).map((o) => o.output).join(''),
    };
}

/// Ends the adapter: disconnect, then wait for its exit (killing it only if it hangs).
export async function stop_adapter(a) {
    if (!a.state.done) {
        // A request to an adapter that is gone would never be answered: bound the wait.
        let timer;
        const gone = new Promise((resolve) => { timer = setTimeout(resolve, TIMEOUT); });
        await Promise.race([a.dc.disconnectRequest({ terminateDebuggee: true }).catch(() => {}), a.exited, gone]);
        clearTimeout(timer);
    }
    a.adapter.stdin.end();
    const timer = setTimeout(() => a.adapter.kill('SIGKILL'), TIMEOUT);
    const how = await a.exited;
    clearTimeout(timer);
    return how;
}

/// Resolves when an output event of `category` has brought text containing `needle`.
export function wait_for_output(a, category, needle) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${category} output containing "${needle}" after ${TIMEOUT} ms; got: ${JSON.stringify(a.output_text(category))}`)), TIMEOUT);
        const check = () => {
            if (a.output_text(category).includes(needle)) {
                clearTimeout(timer);
                a.dc.removeListener('output', check);
                resolve(a.output_text(category));
                return true;
            }
            return false;
        };
        if (!check()) {
            a.dc.on('output', check);
        }
    });
}

/// The line of `file` (in the examples' sources) that carries `LINE-MARK: mark`.
export function line_of(file, mark) {
    const lines = fs.readFileSync(path.join(sources, file), 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes(`LINE-MARK: ${mark}`));
    if (i < 0) {
        throw new Error(`no LINE-MARK: ${mark} in ${file}`);
    }
    return i + 1;
}

/// Whether process `pid` still exists (and is not a zombie).
export function process_alive(pid) {
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return !/\) Z /.test(stat);
    } catch {
        return false;
    }
}

/// The tracer of process `pid` (0: none), from /proc.
export function tracer_of(pid) {
    try {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        return Number(/TracerPid:\s*(\d+)/.exec(status)[1]);
    } catch {
        return 0;
    }
}

/// Launches `program` with a breakpoint at `file:line` and resolves with the stopped event.
/// (`pending_ok`: the breakpoint may be pending at first, as in an MPI job whose ranks are
/// not acquired before the starter runs.)
export async function launch_to_breakpoint(a, launch_args, file_path, line, pending_ok = false) {
    const stopped = a.dc.waitForEvent('stopped');
    await Promise.all([
        a.dc.waitForEvent('initialized').then(async () => {
            const r = await a.dc.setBreakpointsRequest({ source: { path: file_path }, breakpoints: [{ line }] });
            if (!r.body.breakpoints[0].verified && !pending_ok) {
                throw new Error(`breakpoint at ${file_path}:${line} not verified: ${r.body.breakpoints[0].message}`);
            }
            return a.dc.configurationDoneRequest();
        }),
        a.dc.launch(launch_args),
    ]);
    return stopped;
}

/// The child processes of `pid` (from /proc/PID/task/*/children).
export function children_of(pid) {
    const out = [];
    try {
        for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
            const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
            if (text) {
                out.push(...text.split(/\s+/).map(Number));
            }
        }
    } catch {
        // gone
    }
    return out;
}

/// The reverse requests (`startDebugging`) the adapter sends its client: the DebugClient of
/// @vscode/debugadapter-testsupport drops them (its ProtocolClient takes any message that is
/// no event for a response), so they are read here from the same stream, and answered the
/// way a client does, on the adapter's stdin. `next()` resolves with the next one.
export function reverse_requests(a) {
    const seen = [];
    const waiting = [];
    let raw = Buffer.alloc(0);
    a.adapter.stdout.on('data', (data) => {
        raw = Buffer.concat([raw, data]);
        for (;;) {
            const end = raw.indexOf('\r\n\r\n');
            if (end < 0) {
                return;
            }
            const length = Number(/Content-Length: *(\d+)/i.exec(raw.toString('utf8', 0, end))[1]);
            if (raw.length < end + 4 + length) {
                return;
            }
            const message = JSON.parse(raw.toString('utf8', end + 4, end + 4 + length));
            raw = raw.subarray(end + 4 + length);
            if (message.type === 'request') {
                if (waiting.length > 0) {
                    waiting.shift()(message);
                } else {
                    seen.push(message);
                }
            }
        }
    });
    let seq = 1000000;   // the client's own numbers, apart from the DebugClient's
    return {
        next: () => new Promise((resolve, reject) => {
            if (seen.length > 0) {
                resolve(seen.shift());
                return;
            }
            const timer = setTimeout(() => reject(new Error(`no reverse request after ${TIMEOUT} ms`)), TIMEOUT);
            waiting.push((m) => { clearTimeout(timer); resolve(m); });
        }),
        respond: (request, success = true) => {
            const json = JSON.stringify({ type: 'response', seq: seq++, request_seq: request.seq, command: request.command, success });
            a.adapter.stdin.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
        },
    };
}

/// The initialize arguments of a client that can start child sessions (VS Code's).
export const initialize_with_children = {
    adapterID: 'ompdbg', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path',
    supportsStartDebuggingRequest: true,
};
