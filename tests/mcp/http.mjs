// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp --http end to end: the official MCP TypeScript SDK's StreamableHTTPClientTransport
// (2025-11-25, a session each), and raw requests of 2026-07-28's stateless form. Run by
// tests/integration/test_mcp_http.sh, which starts the server in its network namespace.
//
// usage: node http.mjs URL TOKEN_FILE MARKER
// Prints "ok NAME" or "not ok NAME: why" per check; exits 1 when any failed.
import { readFileSync, readdirSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, tokenFile, marker] = process.argv.slice(2);
const token = readFileSync(tokenFile, 'utf8').trim();
const auth = { Authorization: `Bearer ${token}` };
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

async function connect(name) {
	const transport = new StreamableHTTPClientTransport(new URL(url),
							    { requestInit: { headers: auth } });
	const client = new Client({ name, version: '1.0.0' });
	await client.connect(transport);
	return { client, transport };
}

const call = (client, code, options = {}) =>
	client.callTool({ name: 'run_typescript', arguments: { code } }, undefined,
			{ timeout: 60000, ...options });

// --- 2025-11-25 through the SDK's client ----------------------------------------------------
const a = await connect('http-a');
check('initialize over HTTP', a.client.getServerVersion()?.name === 'launch',
      brief(a.client.getServerVersion()));
check('session id', /^[0-9a-f]{64}$/.test(a.transport.sessionId ?? ''), a.transport.sessionId);
check('2025-11-25 negotiated', a.transport.protocolVersion === '2025-11-25',
      a.transport.protocolVersion);

const { tools } = await a.client.listTools();
check('tools/list', tools.length === 2 &&
      tools.find((t) => t.name === 'search_docs')?.annotations?.readOnlyHint === true &&
      tools.some((t) => t.name === 'run_typescript'), brief(tools));

const found = await a.client.callTool({ name: 'search_docs',
					arguments: { query: 'create a customer', limit: 3 } });
check('search_docs', found.structuredContent?.results?.some((h) => h.name === 'customers.create'),
      brief(found.structuredContent));

let r = await call(a.client, 'console.log(6 * 7);');
check('a call', !r.isError && r.structuredContent?.stdout === '42\n', brief(r));

// Two clients at once: B's ping and call are answered while A's slow call runs, with progress.
const b = await connect('http-b');
check('two sessions', b.transport.sessionId && b.transport.sessionId !== a.transport.sessionId,
      `${a.transport.sessionId} ${b.transport.sessionId}`);
let progress = 0;
const slowStarted = Date.now();
const slow = call(a.client, 'await new Promise((r) => setTimeout(r, 4000)); console.log("slow");',
		  { onprogress: () => progress++ });
await sleep(500);
let t0 = performance.now();
await b.client.request({ method: 'ping' }, EmptyResultSchema);
const pingMs = performance.now() - t0;
check('ping of another client during a call', pingMs < 200, `${pingMs.toFixed(1)} ms`);
t0 = performance.now();
r = await call(b.client, 'console.log("b");');
const bDone = Date.now();
check("another client's call during a call", r.structuredContent?.stdout === 'b\n', brief(r));
r = await slow;
check('the slow call ends after', r.structuredContent?.stdout === 'slow\n' &&
      bDone < Date.now() && Date.now() - slowStarted >= 4000, brief(r));
check('progress over HTTP (SSE)', progress >= 2, `${progress} notifications`);
console.log(`# ping during a call: ${pingMs.toFixed(1)} ms`);

// Cancellation (2025-11-25: notifications/cancelled, the SDK sends it on abort).
const abort = new AbortController();
const cancelled = call(a.client, `
import { spawnSync } from 'node:child_process';
spawnSync('/bin/sh', ['-c', 'sleep 30; : ${marker}-cancel']);`, { signal: abort.signal })
	.then((res) => `answered ${brief(res.structuredContent)}`, (e) => `rejected: ${e.message}`);
for (let i = 0; i < 400 && !running(`${marker}-cancel`); i++)
	await sleep(50);
check('a call to cancel runs', running(`${marker}-cancel`) > 0, 'no sleep seen');
abort.abort('test');
t0 = performance.now();
while (running(`${marker}-cancel`) && performance.now() - t0 < 3000)
	await sleep(20);
check('cancel kills the call', !running(`${marker}-cancel`),
      `still running after ${(performance.now() - t0).toFixed(0)} ms`);
console.log(`# cancel to no process: ${(performance.now() - t0).toFixed(0)} ms`);
check('cancelled call rejected', (await cancelled).startsWith('rejected'), await cancelled);

// --- raw requests ---------------------------------------------------------------------------
const post = (body, headers = {}) => fetch(url, {
	method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body),
	headers: { 'Content-Type': 'application/json',
		   Accept: 'application/json, text/event-stream', ...auth, ...headers } });
const init = (version) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
	protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

let res = await post(init('2025-11-25'), { Authorization: '' });
check('401 without token', res.status === 401 &&
      /^Bearer/.test(res.headers.get('www-authenticate') ?? ''), `${res.status}`);
res = await post(init('2025-11-25'), { Authorization: `Bearer ${token}x` });
check('401 with a wrong token', res.status === 401, `${res.status}`);
res = await post(init('2025-11-25'), { Authorization: `Bearer ${token.slice(0, -1)}` });
check('401 with a prefix of the token', res.status === 401, `${res.status}`);
res = await post(init('2025-11-25'), { Origin: 'http://evil.example' });
check('403 for another Origin', res.status === 403, `${res.status}`);
res = await post(init('2025-11-25'), { Origin: 'http://localhost:8931' });
check('a local Origin is served', res.status === 200, `${res.status}`);
res = await fetch(url, { headers: auth });
check('GET is 405', res.status === 405, `${res.status}`);
res = await fetch(url.replace(/\/mcp$/, '/other'), { method: 'POST', headers: auth, body: '{}' });
check('another path is 404', res.status === 404, `${res.status}`);

// An initialize asking for 2026-07-28 gets a session of the newest revision that has them.
res = await post(init('2026-07-28'));
let body = await res.json();
check('initialize for 2026-07-28 gets 2025-11-25', body.result?.protocolVersion === '2025-11-25' &&
      res.headers.get('mcp-session-id'), brief(body));

// Session delete: the SDK's terminateSession, then the id is unknown (404).
const oldSession = b.transport.sessionId;
await b.transport.terminateSession();
res = await post({ jsonrpc: '2.0', id: 9, method: 'ping' },
		 { 'Mcp-Session-Id': oldSession, 'MCP-Protocol-Version': '2025-11-25' });
check('deleted session is 404', res.status === 404, `${res.status}`);
res = await fetch(url, { method: 'DELETE', headers: { ...auth, 'Mcp-Session-Id': oldSession } });
check('DELETE of an unknown session is 404', res.status === 404, `${res.status}`);
check('the other session lives', (await a.client.ping()) !== undefined, 'ping failed');

// --- 2026-07-28, stateless: the revision in _meta and MCP-Protocol-Version, no session -------
const V = '2026-07-28';
const meta = { 'io.modelcontextprotocol/protocolVersion': V,
	       'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
	       'io.modelcontextprotocol/clientCapabilities': {} };
const modern = (id, method, params = {}, headers = {}) => post(
	{ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, ...params._meta } } },
	{ 'MCP-Protocol-Version': V, 'Mcp-Method': method,
	  ...(params.name ? { 'Mcp-Name': params.name } : {}), ...headers });
// The SSE stream's messages, or the one JSON body.
async function messages(response) {
	const text = await response.text();
	if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
		return [JSON.parse(text)];
	return text.split('\n').filter((l) => l.startsWith('data: '))
		.map((l) => JSON.parse(l.slice(6)));
}

res = await modern(1, 'server/discover');
body = await res.json();
check('2026-07-28 server/discover', res.status === 200 &&
      body.result?.supportedVersions?.includes(V) &&
      body.result.supportedVersions.includes('2025-11-25'), brief(body));
res = await modern(2, 'tools/list', {}, { 'Mcp-Session-Id': 'not-a-session' });
body = await res.json();
check('2026-07-28 tools/list without a session (an Mcp-Session-Id ignored)', res.status === 200 &&
      body.result?.tools?.length === 2 && !res.headers.get('mcp-session-id'), brief(body));
res = await modern(3, 'tools/call', { name: 'run_typescript',
				     arguments: { code: 'console.log(6 * 7);' },
				     _meta: { progressToken: 'p3' } });
let msgs = await messages(res);
const final = msgs.at(-1);
check('2026-07-28 tools/call (SSE, progress then result)', res.status === 200 &&
      final?.id === 3 && final.result?.structuredContent?.stdout === '42\n' &&
      msgs.slice(0, -1).every((m) => m.method === 'notifications/progress'), brief(msgs));
res = await modern(4, 'tools/call', { name: 'search_docs', arguments: { query: 'refund' } });
msgs = await messages(res);
check('2026-07-28 search_docs', msgs[0]?.result?.structuredContent?.results?.length > 0,
      brief(msgs));
res = await modern(5, 'tools/list', {}, { 'MCP-Protocol-Version': '2025-11-25' });
body = await res.json();
check('2026-07-28 header mismatch is 400 -32020', res.status === 400 &&
      body.error?.code === -32020, `${res.status} ${brief(body)}`);
res = await modern(6, 'tools/call', { name: 'run_typescript', arguments: { code: '1' } },
		   { 'Mcp-Name': 'search_docs' });
body = await res.json();
check('2026-07-28 Mcp-Name mismatch is 400 -32020', res.status === 400 &&
      body.error?.code === -32020, `${res.status} ${brief(body)}`);
res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: {
	'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
		 { 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' });
body = await res.json();
check('unsupported revision is 400 -32022', res.status === 400 && body.error?.code === -32022 &&
      body.error.data?.supported?.includes(V), `${res.status} ${brief(body)}`);
res = await modern(8, 'no/such');
body = await res.json();
check('2026-07-28 unknown method is 404 -32601', res.status === 404 &&
      body.error?.code === -32601, `${res.status} ${brief(body)}`);

// 2026-07-28 cancellation: closing the call's stream.
const closer = new AbortController();
const streamed = fetch(url, { method: 'POST', signal: closer.signal, headers: {
	'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...auth,
	'MCP-Protocol-Version': V, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_typescript' },
	body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: {
		name: 'run_typescript', _meta: meta, arguments: { code: `
import { spawnSync } from 'node:child_process';
spawnSync('/bin/sh', ['-c', 'sleep 30; : ${marker}-close']);` } } }) })
	.then((response) => response.text()).catch((e) => `fetch failed: ${e.message}`);
let early = null;
streamed.then((text) => { early = text; });
// A loaded machine may take seconds to start a sandbox when none is prepared.
for (let i = 0; i < 400 && !running(`${marker}-close`) && early === null; i++)
	await sleep(50);
check('a stateless call to close runs', running(`${marker}-close`) > 0,
      `no sleep seen; the stream: ${early?.slice(0, 400)}`);
closer.abort();
await streamed;
t0 = performance.now();
while (running(`${marker}-close`) && performance.now() - t0 < 3000)
	await sleep(20);
check('closing the stream cancels the call', !running(`${marker}-close`),
      `still running after ${(performance.now() - t0).toFixed(0)} ms`);
console.log(`# close to no process: ${(performance.now() - t0).toFixed(0)} ms`);

await a.client.close();
process.exit(failed ? 1 : 0);
