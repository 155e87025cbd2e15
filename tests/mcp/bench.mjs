// SPDX-License-Identifier: LGPL-2.1-or-later
// Warm start: a snippet that lists Stripe customers (against the stand-in), timed six ways in
// one run: tools/call to a launch mcp with prepared sandboxes (warm), the same with --pool 0
// (cold), `launch -- tsx` and bare `tsx` as processes (what `npx tsx` runs), the snippet in an
// already-started bare node (the prepared sandbox's own runner outside any sandbox, prepared
// as the pool's are, one per call, interleaved with the warm calls), and the SDK call in an
// already-started node whose connection is open. Run by tests/bench/mcp_bench, which sets up
// the network namespace, the stand-in and DNS.
//
// usage: node bench.mjs LAUNCH MODULES_DIR POLICY RESOLVER
// Prints a Markdown table: median and p95 per variant, in ms. MCP_BENCH_N calls per variant
// (15), MCP_BENCH_GAP_MS between calls (3000), MCP_BENCH_ONLY one variant (node, bare,
// launch, cold, warm; runner: the bare runners alone), MCP_BENCH_TRACE=1 where a warm and a
// bare call's time goes (stderr; =server: the server's and the client's marks alone).
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmdirSync,
	 writeFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Stripe from 'stripe';

const [launch, modules, policy, resolver] = process.argv.slice(2);
const N = Number(process.env.MCP_BENCH_N ?? 15);
// Agents' calls are seconds apart (the model reads and writes in between): the pool is
// refilled in that time. The gap is not part of any figure.
const GAP_MS = Number(process.env.MCP_BENCH_GAP_MS ?? 3000);
const SNIPPET = `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_API_KEY!);
const customers = await stripe.customers.list({ limit: 2 });
console.log(customers.data.length);
`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function stats(samples) {
	const sorted = [...samples].sort((a, b) => a - b);
	const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
	return { median: at(0.5), p95: at(0.95), n: sorted.length, samples };
}

// MCP_BENCH_TRACE=1: where a call's time goes. The runner (LAUNCH_MCP_TRACE) and the server
// write the times of their steps; the snippet marks its first line.
// MCP_BENCH_TRACE=server: the server's and the client's marks alone, the runners untouched.
const TRACE = !!process.env.MCP_BENCH_TRACE && process.env.MCP_BENCH_TRACE !== 'server';
const STEPS = !!process.env.MCP_BENCH_TRACE;
const CODE = TRACE ? `${SNIPPET.replace('const stripe', "globalThis.__mark?.('code');\nconst stripe")}` +
	"globalThis.__mark?.('end');\n" : SNIPPET;
const wall = () => performance.timeOrigin + performance.now();
const serverMarks = [];

// The runner's marks, from its stderr: [[step, wall ms], ...], or null.
function runnerMarks(stderr) {
	const line = stderr.split('\n').find((l) => l.startsWith('launch-trace '));
	return line ? JSON.parse(line.slice('launch-trace '.length)) : null;
}

async function mcp(pool, between) {
	const client = new Client({ name: 'mcp-bench', version: '1' });
	const args = ['mcp', '--policy', policy, '--resolver', resolver, '--modules', modules,
		      '--pass-env', 'STRIPE_API_KEY', '--pass-env', 'NODE_EXTRA_CA_CERTS',
		      '--pool', String(pool), '--audit-log', '/dev/null', ...CGROUP_ARGS];
	if (TRACE)
		args.push('--setenv', 'LAUNCH_MCP_TRACE=1');
	// The server's own marks always: its "waited" says which calls found no sandbox ready.
	const transport = new StdioClientTransport({ command: launch, args,
		env: { ...process.env, LAUNCH_MCP_TRACE: '1' }, stderr: 'pipe' });
	let text = '';
	transport.stderr.setEncoding('utf8').on('data', (chunk) => {
		text += chunk;
		const lines = text.split('\n');
		text = lines.pop();
		for (const line of lines) {
			const m = /^launch-trace-server (\S+) ([\d.]+)$/.exec(line);
			if (m)
				serverMarks.push([`launch mcp: ${m[1]}`, Number(m[2])]);
			else
				process.stderr.write(`${line}\n`);
		}
	});
	await client.connect(transport);
	// The moment each reply is parsed from the server's output, before the client's own work
	// on it (its schema's checks) resolves the call.
	const onmessage = transport.onmessage;
	transport.onmessage = (message, extra) => {
		serverMarks.push(['client: message', wall()]);
		onmessage.call(transport, message, extra);
	};
	const samples = [];
	const ready = []; // per call: its prepared sandbox was ready
	const traces = [];
	let waited = 0;
	if (between)
		await between(-1);
	// The server's start: its sandboxes (and the bare runners) all start at once.
	await sleep(3 * GAP_MS);
	for (let i = 0; i < N; i++) {
		const t0 = performance.now(), w0 = wall();
		const r = await client.callTool({ name: 'run_typescript', arguments: { code: CODE } },
						undefined, { timeout: 120000 });
		const ms = performance.now() - t0;
		const w1 = wall();
		if (r.structuredContent?.stdout !== '2\n')
			throw new Error(`pool ${pool}: ${JSON.stringify(r.structuredContent).slice(0, 400)}`);
		samples.push(ms);
		await sleep(50); // the server's last marks
		const marks = serverMarks.filter(([, t]) => t >= w0 && t <= w1 + 50);
		if (STEPS)
			traces.push([['sent', w0], ...marks,
				     ...(runnerMarks(r.structuredContent.stderr) ?? []), ['received', w1]]);
		// A prepared sandbox that was not ready yet (its node still loading, on a loaded
		// machine): the server waited for it.
		ready.push(!pool || !marks.some(([step]) => step === 'launch mcp: waited'));
		if (!ready.at(-1))
			waited++;
		await sleep(GAP_MS);
		if (between)
			await between(i);
	}
	await client.close();
	if (pool)
		console.error(`mcp_bench: pool ${pool}: ${waited} of ${N} calls waited for their ` +
			      'prepared sandbox to be ready');
	return { ...stats(samples), ready, traces };
}

// The prepared sandbox's runner (launcher/agent/mcp_runner.mjs) as launch mcp starts it, but bare,
// outside any sandbox: its standard input a socket, "ready" when loaded (the SDK imported,
// the warm-ups done), the end of input its "go", "done" at the code's end. A pool of them as
// the server's: each started when the server starts its replacement sandbox (after a call),
// used as many calls later, so that it has settled as long; one fresh process per call.
// Timed from the go (the snippet written) to the done.
const RUNNER = new URL('../../launcher/agent/mcp_runner.mjs', import.meta.url);

// launch puts each job in a CPU group of its own (cgroup v2's cpu controller, else v1's),
// where it competes as one task. The bare runner gets one too, so that only the sandbox's own
// work differs; directly below the root, not below launch's `launch` group (where launch's
// clean-up kills what it finds in a group that is no sandbox of its own), so that it does
// not share in the CPU that other sessions' sandboxes take there on a shared machine. The
// folder of that controller, or null.
function cpuControllerRoot() {
	for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
		const [before, after] = line.split(' - ');
		if (!after)
			continue;
		const mountPoint = before.split(' ')[4];
		const [type, , options] = after.split(' ');
		if (type === 'cgroup' && options.split(',').includes('cpu'))
			return mountPoint;
		if (type === 'cgroup2' && existsSync(`${mountPoint}/cgroup.subtree_control`) &&
		    readFileSync(`${mountPoint}/cgroup.subtree_control`, 'utf8').split(/\s/).includes('cpu'))
			return mountPoint;
	}
	return null;
}
const CPU_ROOT = cpuControllerRoot();

// The bench's sandboxes get a cgroup parent of their own, a group directly below the root as
// the bare runners' are: below launch's default parent they would share its CPU with every
// other launch job of the machine (other sessions' tests on a shared one), which the bare
// runner does not. cgroup v2's mount and the v1 hierarchies' (where launch mirrors the parent
// on a hybrid host), from mountinfo.
function cgroupMounts() {
	const v1 = [];
	let v2 = null;

	for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
		const [before, after] = line.split(' - ');
		if (!after)
			continue;
		const mountPoint = before.split(' ')[4];
		const type = after.split(' ')[0];
		if (type === 'cgroup2')
			v2 ??= mountPoint;
		else if (type === 'cgroup')
			v1.push(mountPoint);
	}
	return { v1, v2 };
}
const CGROUPS = cgroupMounts();
const CGROUP_NAME = `launch-mcp-bench-${process.pid}`;
const CGROUP_ARGS = CGROUPS.v2 ? ['--cgroup-parent', `${CGROUPS.v2}/${CGROUP_NAME}`] : [];

// The parent, once every sandbox of the bench is gone (a server's last sandboxes are torn
// down after its end): launch gc --unload removes the holder of the BPF programs that the
// parent's first launch loaded, then the parent goes, and its v1 mirrors.
async function removeCgroupParent() {
	if (!CGROUPS.v2)
		return;
	try {
		execFileSync(launch, ['gc', '--unload', ...CGROUP_ARGS], { stdio: 'ignore' });
	} catch {}
	for (const root of [CGROUPS.v2, ...CGROUPS.v1])
		if (existsSync(`${root}/${CGROUP_NAME}`))
			await removeGroup(`${root}/${CGROUP_NAME}`, 1000).catch((e) =>
				console.error(`mcp_bench: ${root}/${CGROUP_NAME}: ${e.message}`));
}

// The runner's children (esbuild's service) outlive it: killed, then the group goes.
async function removeGroup(group, triesMax = 100) {
	for (let tries = 0; ; tries++) {
		for (const pid of readFileSync(`${group}/cgroup.procs`, 'utf8').split('\n').filter(Boolean))
			try {
				process.kill(Number(pid), 'SIGKILL');
			} catch {}
		try {
			rmdirSync(group);
			return;
		} catch (e) {
			if (e.code !== 'EBUSY' || tries === triesMax)
				throw e;
		}
		await sleep(20);
	}
}

function lineFrom(socket, prefix) {
	return new Promise((resolve, reject) => {
		let text = '';

		if (socket.destroyed)
			reject(new Error(`runner gone before "${prefix}"`));
		const onData = (chunk) => {
			text += chunk;
			for (const line of text.split('\n').slice(0, -1))
				if (line.startsWith(prefix)) {
					socket.off('data', onData);
					resolve(line);
				}
		};
		socket.on('data', onData);
		socket.once('close', () => reject(new Error(`runner gone before "${prefix}"`)));
	});
}

// Starts bare runner i; its go() runs the snippet and returns the time, whether it was ready
// at the go, and its trace.
async function bareStart(state, i) {
	const dir = `${state}/call-${i}`;
	const path = `${state}/s${i}`;
	mkdirSync(dir);
	const server = net.createServer();
	await new Promise((resolve) => server.listen(path, resolve));
	const accepted = new Promise((resolve) => server.once('connection', resolve));
	const end = net.connect(path);
	await new Promise((resolve) => end.once('connect', resolve));
	const peer = await accepted;
	peer.setEncoding('utf8');
	let isReady = false;
	const ready = lineFrom(peer, 'ready').then(() => { isReady = true; });
	ready.catch(() => {});
	// A private, empty temporary folder, as launch's job has (its own /tmp): tsx keeps its
	// transform cache there, and with the host's /tmp/tsx-0, shared with every other tsx run
	// as root, the bare runner's import of main.mts took 100 to 185 ms here, against 22 to
	// 30 ms with its own.
	const tmp = `${dir}/tmp`;
	mkdirSync(tmp);
	// The sandbox's environment: launch mcp passes these alone.
	const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: tmp, TMPDIR: tmp,
		      LAUNCH_MCP_PRELOAD: 'stripe',
		      STRIPE_API_KEY: process.env.STRIPE_API_KEY,
		      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
		      ...(TRACE ? { LAUNCH_MCP_TRACE: '1' } : {}) };
	const child = spawn(process.execPath, [`${state}/runner.mjs`], { cwd: dir,
		stdio: [end, 'pipe', 'pipe'], env });
	let out = '', err = '';
	child.stdout.setEncoding('utf8').on('data', (chunk) => { out += chunk; });
	child.stderr.setEncoding('utf8').on('data', (chunk) => { err += chunk; });
	const exited = new Promise((resolve) => child.once('exit', resolve));
	const group = CPU_ROOT && `${CPU_ROOT}/launch-mcp-bench-${process.pid}-${i}`;
	if (group) {
		mkdirSync(group);
		writeFileSync(`${group}/cgroup.procs`, String(child.pid));
	}
	end.destroy();
	server.close();
	const stop = async () => {
		child.kill('SIGKILL');
		await exited;
		if (group)
			await removeGroup(group);
	};
	const go = async () => {
		const wasReady = isReady;
		await ready;
		const t0 = performance.now(), w0 = wall();
		writeFileSync(`${dir}/main.mts`, CODE);
		const done = lineFrom(peer, 'done');
		peer.end();
		const line = await done;
		const ms = performance.now() - t0;
		const w1 = wall();
		await stop();
		if (line !== 'done 0' || out !== '2\n')
			throw new Error(`bare runner: ${line}, stdout ${JSON.stringify(out)}, ` +
					`stderr ${err.slice(-400)}`);
		const marks = TRACE ? [['sent', w0], ...(runnerMarks(err) ?? []), ['received', w1]] : null;
		return { ms, ready: wasReady, marks };
	};
	return { go, stop };
}

function processes(argv, dir) {
	const samples = [];
	for (let i = 0; i < N; i++) {
		const t0 = performance.now();
		let out;
		try {
			out = execFileSync(argv[0], argv.slice(1), { cwd: dir, encoding: 'utf8',
								 stdio: ['ignore', 'pipe', 'pipe'] });
		} catch (e) {
			throw new Error(`${argv.join(' ')}: exit ${e.status}: ${e.stderr?.slice(-600)}`);
		}
		samples.push(performance.now() - t0);
		if (out.trim() !== '2')
			throw new Error(`${argv.join(' ')}: ${out}`);
	}
	return stats(samples);
}

async function inProcess() {
	const stripe = new Stripe(process.env.STRIPE_API_KEY);
	const samples = [];
	await stripe.customers.list({ limit: 2 }); // the first call opens the connection
	for (let i = 0; i < N; i++) {
		const t0 = performance.now();
		const customers = await stripe.customers.list({ limit: 2 });
		samples.push(performance.now() - t0);
		if (customers.data.length !== 2)
			throw new Error('in-process: wrong answer');
	}
	return stats(samples);
}

// Each step's time since the call was sent, median over the calls (stderr).
function traceTable(name, traces) {
	const at = new Map();
	for (const marks of traces.filter(Boolean)) {
		const sent = marks[0][1];
		for (const [step, t] of marks)
			at.set(step, [...(at.get(step) ?? []), t - sent]);
	}
	const steps = [...at].map(([step, ts]) => [step, stats(ts)]).sort((x, y) => x[1].median - y[1].median);
	let before = 0;
	// Each call's steps too, one line per call: where a slow call's time went.
	for (const marks of traces.filter(Boolean))
		console.error(`mcp_bench: ${name} call: ` + marks.map(([step, t], i) =>
			`${step} +${(t - marks[Math.max(0, i - 1)][1]).toFixed(1)}`).join(', '));
	console.error(`mcp_bench: trace of ${name} (ms since sent: median, step, p95, n):`);
	for (const [step, s] of steps) {
		console.error(`  ${step.padEnd(22)} ${s.median.toFixed(1).padStart(7)} ` +
			      `(+${(s.median - before).toFixed(1)}) p95 ${s.p95.toFixed(1)} n ${s.n}`);
		before = s.median;
	}
}

// The snippet as a file, in a folder whose node_modules is the same as the server's.
const dir = mkdtempSync('/var/tmp/launch-mcp-bench.');
chmodSync(dir, 0o755); // launch's job runs as nobody
symlinkSync(modules, `${dir}/node_modules`);
writeFileSync(`${dir}/snippet.mts`, SNIPPET);
// tsx as npx runs it, without npx's own start-up: in a namespace without the registry, npm's
// look-ups for updates take seconds, which says nothing about the sandbox.
const npx = [`${modules}/.bin/tsx`, 'snippet.mts'];
const rows = [];
const row = (name, s) => {
	rows.push([name, s]);
	console.error(`mcp_bench: ${name}: median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms`);
};
// The bare runner's folder: as the server's, with the runner, tsx's warm-up and node_modules.
const state = mkdtempSync('/var/tmp/launch-mcp-bench.');
chmodSync(state, 0o755);
copyFileSync(RUNNER, `${state}/runner.mjs`);
writeFileSync(`${state}/warmup.mts`, 'const warm: number = 1;\nexport default warm;\n');
symlinkSync(modules, `${state}/node_modules`);
if (CGROUPS.v2) {
	mkdirSync(`${CGROUPS.v2}/${CGROUP_NAME}`);
	// The parent's first launch loads (verifies) the BPF programs: not in any timed call.
	execFileSync(launch, ['--policy', policy, '--resolver', resolver, '--audit-log', '/dev/null',
			      ...CGROUP_ARGS, '--', '/bin/true'], { stdio: 'ignore' });
}
// MCP_BENCH_ONLY=warm (or cold, bare, ...): one variant, for a quick look.
const only = process.env.MCP_BENCH_ONLY;
const want = (key) => !only || only === key;
try {
	// The bare variants first: they check that the stand-in and DNS answer at all.
	if (want('node'))
		row('the call in an already-started node', await inProcess());
	if (want('bare'))
		row('bare `tsx snippet.mts`', processes(npx, dir));
	if (want('launch'))
		row('`launch -- tsx snippet.mts`', processes([launch, '--policy', policy,
			'--resolver', resolver, '--audit-log', '/dev/null', ...CGROUP_ARGS, '--',
			...npx], dir));
	if (want('cold'))
		row('`launch mcp --pool 0` (cold)', await mcp(0));
	if (want('warm')) {
		// Call for call: a warm call, then the same snippet in a bare runner, each after a
		// quiet gap, so that both see the same load on a shared machine.
		const bare = [], pending = [];
		let started = 0;
		const warm = await mcp(2, async (i) => {
			if (i >= 0)
				bare.push(await (pending.shift()).go());
			// The server prepares its sandboxes at its start and right after each call
			// (100 ms after its reply): so are the bare runners, before the gap, so that
			// neither call runs while a node of the other kind is still starting. (Started
			// after the gap, a bare runner's start-up took the CPU from the next warm call:
			// 16 ms of one call's main thread went to it.)
			while (pending.length < 2)
				pending.push(await bareStart(state, started++));
			if (i >= 0)
				await sleep(GAP_MS);
		});
		for (const runner of pending)
			await runner.stop();
		const b = stats(bare.map((x) => x.ms));
		row('the snippet in an already-started bare node (the runner, prepared as the pool\'s)', b);
		row('`launch mcp`, prepared sandbox (warm)', warm);
		// Each warm call against the bare run right after it: the load a shared machine
		// puts on both is nearly the same within a pair.
		const pairs = warm.samples.map((ms, i) => ms - bare[i].ms);
		const ratios = warm.samples.map((ms, i) => ms / bare[i].ms);
		rows.push(['warm less the bare runner, pair by pair', stats(pairs)]);
		// The pairs whose runners were both ready: what the pool gives when it keeps up.
		const readyPairs = pairs.filter((_, i) => warm.ready[i] && bare[i].ready);
		if (readyPairs.length < pairs.length && readyPairs.length) {
			rows.push(['warm, the calls whose sandbox was ready',
				   stats(warm.samples.filter((_, i) => warm.ready[i]))]);
			rows.push(['the same less the bare runner (both ready), pair by pair',
				   stats(readyPairs)]);
		}
		console.error(`mcp_bench: bare runners: ${bare.filter((x) => !x.ready).length} of ` +
			      `${bare.length} were not ready at their go`);
		console.error(`mcp_bench: warm - bare runner: medians ${(warm.median - b.median).toFixed(1)} ms ` +
			      `(ratio ${(warm.median / b.median).toFixed(2)}); pair by pair: median ` +
			      `${stats(pairs).median.toFixed(1)} ms, ratio ${stats(ratios).median.toFixed(2)}`);
		console.error(`mcp_bench: warm samples ${warm.samples.map((x) => x.toFixed(0)).join(' ')}; ` +
			      `bare runner ${bare.map((x) => x.ms.toFixed(0)).join(' ')}`);
		if (STEPS)
			traceTable('warm', warm.traces);
		if (TRACE)
			traceTable('bare runner', bare.map((x) => x.marks));
	}
	if (only === 'runner') {
		// The bare runners alone, paced as in the warm run: to try a change of the runner.
		const bare = [], pending = [];
		let started = 0;
		while (pending.length < 2)
			pending.push(await bareStart(state, started++));
		for (let i = 0; i < N; i++) {
			await sleep(GAP_MS);
			bare.push(await (pending.shift()).go());
			pending.push(await bareStart(state, started++));
		}
		for (const runner of pending)
			await runner.stop();
		row('the bare runner alone', stats(bare.map((x) => x.ms)));
		if (TRACE)
			traceTable('bare runner', bare.map((x) => x.marks));
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
	rmSync(state, { recursive: true, force: true });
	await removeCgroupParent();
}
console.log('| variant | median ms | p95 ms | runs |');
console.log('|---|---|---|---|');
for (const [name, s] of rows)
	console.log(`| ${name} | ${s.median.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.n} |`);
