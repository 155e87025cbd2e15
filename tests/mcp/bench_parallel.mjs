// SPDX-License-Identifier: LGPL-2.1-or-later
// Warm call latency with calls in parallel: the same snippet as bench.mjs (Stripe customers
// against the stand-in) sent 1, 2 and 4 at once through the official SDK's client, over stdio
// and over Streamable HTTP (tests/mcp/connect.mjs), to a launch mcp with --max-calls 4 and
// four prepared sandboxes, without the type-check (typecheck-bench.mjs measures it). Each
// call is timed from its tools/call to its result; a pause between rounds lets the pool
// refill, as an agent's pauses do. Run by tests/bench/mcp_bench.
//
// usage: node bench_parallel.mjs LAUNCH MODULES_DIR POLICY RESOLVER
// Prints a Markdown table: median and p95 in ms per transport and width. MCP_BENCH_N calls
// per cell (16), MCP_BENCH_GAP_MS between rounds (3000).
import { performance } from 'node:perf_hooks';
import { connect } from './connect.mjs';

const [launch, modules, policy, resolver] = process.argv.slice(2);
const N = Number(process.env.MCP_BENCH_N ?? 16);
const GAP_MS = Number(process.env.MCP_BENCH_GAP_MS ?? 3000);
const WIDTHS = [1, 2, 4];
const SNIPPET = `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_API_KEY!);
const customers = await stripe.customers.list({ limit: 2 });
console.log(customers.data.length);
`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const args = ['mcp', '--policy', policy, '--resolver', resolver, '--modules', modules,
	      '--pass-env', 'STRIPE_API_KEY', '--pass-env', 'NODE_EXTRA_CA_CERTS',
	      '--audit-log', '/dev/null', '--max-calls', '4', '--pool', '4', '--timeout', '120',
	      // The type-check's cost is typecheck-bench.mjs's table; here it would make each
	      // refill of four prepared sandboxes seconds of CPU dearer, and measure the refill.
	      '--no-typecheck'];

function stats(samples) {
	const sorted = [...samples].sort((a, b) => a - b);
	const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
	return { median: at(0.5), p95: at(0.95), n: sorted.length };
}

async function timedCall(client) {
	const t0 = performance.now();
	const r = await client.callTool({ name: 'run_typescript', arguments: { code: SNIPPET } },
					undefined, { timeout: 120000 });
	if (r.isError || r.structuredContent?.stdout !== '2\n')
		throw new Error(`call failed: ${JSON.stringify(r).slice(0, 400)}`);
	return performance.now() - t0;
}

const rows = [];
for (const transport of ['stdio', 'http']) {
	const server = await connect(launch, args, { name: `bench-parallel-${transport}`,
						     quiet: true, transport });
	// One unmeasured round at the widest: the pool is filled and the SDK's first import done.
	await Promise.all(WIDTHS.slice(-1).map(() => timedCall(server.client)));
	for (const width of WIDTHS) {
		const times = [];
		while (times.length < N) {
			await sleep(GAP_MS);
			times.push(...await Promise.all(Array.from({ length: width },
								   () => timedCall(server.client))));
		}
		rows.push({ transport, width, ...stats(times) });
	}
	await server.close();
}

const f = (ms) => ms.toFixed(1);
console.log('| transport | calls at once | warm call median (ms) | p95 (ms) | calls |');
console.log('|---|---:|---:|---:|---:|');
for (const r of rows)
	console.log(`| ${r.transport === 'http' ? 'Streamable HTTP' : 'stdio'} | ${r.width} | ` +
		    `${f(r.median)} | ${f(r.p95)} | ${r.n} |`);
console.log(`\n--max-calls 4 --pool 4 --no-typecheck; rounds ${GAP_MS} ms apart.`);
