// SPDX-License-Identifier: LGPL-2.1-or-later
// What the type-check adds to a warm call: the same Stripe code, checked and with
// "typecheck": false, each call on a ready prepared sandbox (a pause between calls lets the
// pool refill), through the official MCP client; the medians and p95s of the server's
// duration_ms and of the client's wall time. Run by tests/bench/mcp_bench.
//
// usage: node typecheck-bench.mjs ROUNDS PAUSE_MS LAUNCH ARGS...
// Prints a Markdown table.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [rounds, pause, launch, ...args] = process.argv.slice(2);
const CODE = `import Stripe from 'stripe';
const stripe = new Stripe('sk_test_typecheck_bench');
const params: Stripe.CustomerCreateParams = { email: 'ada@example.com', metadata: { n: '1' } };
const list = stripe.customers.list;
console.log(typeof list, Object.keys(params).length);
`;
const transport = new StdioClientTransport({ command: launch, args, env: { ...process.env },
					     stderr: process.env.MCP_BENCH_QUIET ? 'ignore' : 'inherit' });
const client = new Client({ name: 'launch-typecheck-bench', version: '1.0.0' });
const times = { checked: [], unchecked: [] };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

await client.connect(transport);
await sleep(Number(pause));
for (let i = 0; i < Number(rounds); i++)
	for (const kind of i % 2 ? ['unchecked', 'checked'] : ['checked', 'unchecked']) {
		const t0 = performance.now();
		const r = await client.callTool({ name: 'run_typescript', arguments: {
			code: CODE, ...(kind === 'unchecked' ? { typecheck: false } : {}) } },
		undefined, { timeout: 120000 });
		const wall = performance.now() - t0;
		if (r.isError || r.structuredContent.stdout !== 'function 2\n')
			throw new Error(`call failed: ${JSON.stringify(r).slice(0, 400)}`);
		times[kind].push([r.structuredContent.duration_ms, wall]);
		await sleep(Number(pause));
	}
const f = (ms) => ms.toFixed(1);
console.log('| call | server duration_ms median | p95 | client wall median (ms) | p95 (ms) | calls |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const kind of Object.keys(times)) {
	const server = times[kind].map((t) => t[0]), wall = times[kind].map((t) => t[1]);
	console.log(`| ${kind === 'checked' ? 'type-checked' : '"typecheck": false'} | ` +
		    `${pct(server, 0.5)} | ${pct(server, 0.95)} | ${f(pct(wall, 0.5))} | ` +
		    `${f(pct(wall, 0.95))} | ${server.length} |`);
}
const added = pct(times.checked.map((t) => t[0]), 0.5) - pct(times.unchecked.map((t) => t[0]), 0.5);
const addedWall = pct(times.checked.map((t) => t[1]), 0.5) - pct(times.unchecked.map((t) => t[1]), 0.5);
console.log(`\nType-check added at the median: ${added} ms (server), ${f(addedWall)} ms (client); ` +
	    `target <= 150 ms.`);
await client.close();
