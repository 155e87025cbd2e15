// SPDX-License-Identifier: LGPL-2.1-or-later
// Warm call latency, stdio against Streamable HTTP: the same snippet (Stripe customers against
// the stand-in) through the official SDK's StdioClientTransport and its
// StreamableHTTPClientTransport, each to a launch mcp with prepared sandboxes, call for call
// interleaved; and a ping over each. Run by tests/bench/mcp_bench after bench.mjs.
//
// usage: node bench_http.mjs LAUNCH MODULES_DIR POLICY RESOLVER
// Prints a Markdown table: median and p95 in ms. MCP_BENCH_N calls per transport (15),
// MCP_BENCH_GAP_MS between calls (3000); MCP_BENCH_TRACE=1: where each transport's time goes
// (the request's way in, the server's call, the answer's way out), from the servers' marks.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [launch, modules, policy, resolver] = process.argv.slice(2);
const N = Number(process.env.MCP_BENCH_N ?? 15);
const GAP_MS = Number(process.env.MCP_BENCH_GAP_MS ?? 3000);
const PORT = 8932;
const SNIPPET = `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_API_KEY!);
const customers = await stripe.customers.list({ limit: 2 });
console.log(customers.data.length);
`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const TRACE = !!process.env.MCP_BENCH_TRACE;
const wall = () => performance.timeOrigin + performance.now();
const marks = { stdio: [], http: [] };
// The server's "launch-trace-server STEP MS" lines into marks[name].
function collect(name, stream) {
	let text = '';
	stream.setEncoding('utf8').on('data', (chunk) => {
		text += chunk;
		const lines = text.split('\n');
		text = lines.pop();
		for (const line of lines) {
			const m = /^launch-trace-server (\S+) ([\d.]+)$/.exec(line);
			if (m)
				marks[name].push([m[1], Number(m[2])]);
		}
	});
}
const env = { ...process.env, ...(TRACE ? { LAUNCH_MCP_TRACE: '1' } : {}) };
const args = ['mcp', '--policy', policy, '--resolver', resolver, '--modules', modules,
	      '--pass-env', 'STRIPE_API_KEY', '--pass-env', 'NODE_EXTRA_CA_CERTS',
	      '--audit-log', '/dev/null'];

function stats(samples) {
	const sorted = [...samples].sort((a, b) => a - b);
	const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
	return { median: at(0.5), p95: at(0.95) };
}

const dir = mkdtempSync('/tmp/launch-mcp-bench-http.');
const tokenFile = `${dir}/token`;
const token = randomBytes(32).toString('hex');
writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });

const stdio = new Client({ name: 'bench-stdio', version: '1' });
const stdioTransport = new StdioClientTransport({ command: launch, args, env,
						 stderr: TRACE ? 'pipe' : 'ignore' });
if (TRACE)
	collect('stdio', stdioTransport.stderr);
await stdio.connect(stdioTransport);
const server = spawn(launch, [...args, '--http', String(PORT), '--token-file', tokenFile],
		     { stdio: ['ignore', 'ignore', 'pipe'], env });
if (TRACE)
	collect('http', server.stderr);
await new Promise((resolve, reject) => {
	let text = '';
	server.stderr.setEncoding('utf8').on('data', (chunk) => {
		text += chunk;
		if (text.includes('serving MCP over HTTP'))
			resolve();
	});
	server.on('exit', (code) => reject(new Error(`launch mcp --http exited ${code}: ${text}`)));
});
const http = new Client({ name: 'bench-http', version: '1' });
await http.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${PORT}/mcp`),
	{ requestInit: { headers: { Authorization: `Bearer ${token}` } } }));

const times = { stdio: [], http: [] }, pings = { stdio: [], http: [] };
const spans = { stdio: [], http: [] }; // [sent, server's call, server's reply, answered]
const clients = { stdio, http };
// One unmeasured call each: both pools are filled and the SDK's first import is done.
for (const client of Object.values(clients))
	await client.callTool({ name: 'run_typescript', arguments: { code: SNIPPET } });
for (let i = 0; i < N; i++) {
	for (const [name, client] of Object.entries(clients)) {
		await sleep(GAP_MS);
		const sent = wall();
		let t0 = performance.now();
		const r = await client.callTool({ name: 'run_typescript', arguments: { code: SNIPPET } },
						undefined, { timeout: 60000 });
		times[name].push(performance.now() - t0);
		spans[name].push([sent, wall()]);
		if (r.isError || r.structuredContent?.stdout !== '2\n')
			throw new Error(`${name} call failed: ${JSON.stringify(r).slice(0, 400)}`);
		t0 = performance.now();
		await client.request({ method: 'ping' }, EmptyResultSchema);
		pings[name].push(performance.now() - t0);
	}
}
await stdio.close();
await http.close();
server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));
rmSync(dir, { recursive: true, force: true });

const f = (ms) => ms.toFixed(1);
if (TRACE) {
	await sleep(200);
	for (const name of ['stdio', 'http']) {
		const inbound = [], served = [], outbound = [];
		for (const [sent, answered] of spans[name]) {
			const at = (step) => marks[name].find(([s, ms]) => s === step && ms >= sent &&
							      ms <= answered)?.[1];
			const call = at('call'), replied = at('replied');
			if (call === undefined || replied === undefined)
				continue;
			inbound.push(call - sent);
			served.push(replied - call);
			outbound.push(answered - replied);
		}
		console.error(`${name}: request in ${f(stats(inbound).median)} ms, server ` +
			      `${f(stats(served).median)} ms, answer out ${f(stats(outbound).median)} ms ` +
			      `(medians of ${served.length})`);
	}
}
console.log('| transport | warm call median (ms) | p95 (ms) | ping median (ms) | ping p95 (ms) |');
console.log('|---|---:|---:|---:|---:|');
for (const name of ['stdio', 'http']) {
	const c = stats(times[name]), p = stats(pings[name]);
	console.log(`| ${name === 'http' ? 'Streamable HTTP (127.0.0.1, token, session)' : 'stdio'} ` +
		    `| ${f(c.median)} | ${f(c.p95)} | ${f(p.median)} | ${f(p.p95)} |`);
}
console.log(`\n${N} calls each, interleaved, ${GAP_MS} ms apart.`);
