// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp --secret, with the official MCP TypeScript SDK's client: the server's one HTTPS
// gateway serves every call's sandbox. A call's code holds only the placeholder, the stand-in
// gets the real key, the result lists the call's requests (and only its own when two calls
// run at once), the attacker's own key is refused. Run by tests/integration/test_mcp_gateway.sh.
//
// usage: node gateway.mjs MODE LAUNCH ARGS...   MODE: test, session (--sessions), or bench (the
// first request of 20 calls)
// Prints "ok NAME" or "not ok NAME: why" per check; exits 1 when any failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [mode, launch, ...args] = process.argv.slice(2);
const key = process.env.GW_REAL_KEY ?? '';
let failed = 0;

function check(name, cond, why) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name}: ${why}`);
	}
}

const brief = (value) => JSON.stringify(value).slice(0, 700);

const transport = new StdioClientTransport({ command: launch, args, env: { ...process.env },
					     stderr: 'inherit' });
const client = new Client({ name: 'launch-gateway', version: '1.0.0' });
await client.connect(transport);

// The SDK checks structuredContent against the tool's outputSchema.
const call = (code) => client.callTool({ name: 'run_typescript', arguments: { code } },
				       undefined, { timeout: 120000 });

if (mode === 'bench') {
	// Each call's first request, timed inside the call, and its second on the same keep-alive
	// connection: their difference is the connection's set-up (a TLS handshake with the
	// gateway; with a gateway per call, also that gateway's own connection to the provider).
	// fetch's implementation is loaded first (a data: URL), which is no connection's cost.
	const first = [], setup = [];
	for (let i = 0; i < 20; i++) {
		const r = await call(`
await fetch('data:,warm');
const url = 'https://api.stripe.com/gw/echo';
const headers = { authorization: 'Bearer ' + process.env.STRIPE_API_KEY };
const t0 = performance.now();
const a = await fetch(url, { headers });
await a.text();
const t1 = performance.now();
const b = await fetch(url, { headers });
await b.text();
const t2 = performance.now();
console.log('first_ms ' + (t1 - t0).toFixed(3) + ' second_ms ' + (t2 - t1).toFixed(3) +
	    ' status ' + a.status + ' ' + b.status);
`);
		const m = /first_ms ([0-9.]+) second_ms ([0-9.]+) status 200 200/.exec(
			r.structuredContent?.stdout ?? '');
		if (!m) {
			check('bench call', false, brief(r));
			break;
		}
		first.push(Number(m[1]));
		setup.push(Number(m[1]) - Number(m[2]));
		// Calls apart, as an agent's are: the pool is refilled in between.
		await new Promise((done) => setTimeout(done, Number(process.env.GW_BENCH_GAP_MS ?? 0)));
	}
	console.log(`# first_ms ${first.map((t) => t.toFixed(1)).join(' ')}`);
	console.log(`# setup_ms ${setup.map((t) => t.toFixed(1)).join(' ')}`);
	const q = (list, p) => [...list].sort((x, y) => x - y)[Math.min(list.length - 1,
									    Math.floor(p * list.length))];
	console.log(`first_request_ms median ${q(first, 0.5)?.toFixed(2)} p95 ` +
		    `${q(first, 0.95)?.toFixed(2)} setup_median ${q(setup, 0.5)?.toFixed(2)} ` +
		    `setup_p95 ${q(setup, 0.95)?.toFixed(2)} n ${first.length}`);
	await client.close();
	process.exit(failed ? 1 : 0);
}

if (mode === 'session') {
	// Two calls in one session's sandbox (its gateway client kept): each lists its own.
	const get = (tag) => `
const res = await fetch('https://api.stripe.com/v1/customers/cus_${tag}', {
	headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
await res.text();
console.log('${tag} ' + res.status);
`;
	const one = await client.callTool({ name: 'run_typescript',
					    arguments: { session: 'new', code: get('first') } });
	const handle = one.structuredContent?.session;
	const two = await client.callTool({ name: 'run_typescript',
					    arguments: { session: handle, session_end: true,
							 code: get('second') } });
	const paths = (r) => (r.structuredContent?.http_requests ?? []).map((x) => x.path);
	check('a session\'s first call lists its request',
	      handle && JSON.stringify(paths(one)) === '["/v1/customers/cus_first"]', brief(one));
	check('a session\'s second call lists only its own',
	      JSON.stringify(paths(two)) === '["/v1/customers/cus_second"]', brief(two));
	await client.close();
	process.exit(failed ? 1 : 0);
}

const { tools } = await client.listTools();
const tool = tools.find((t) => t.name === 'run_typescript');
check('outputSchema lists http_requests',
      tool?.outputSchema?.properties?.http_requests?.items?.required?.includes('decision'),
      brief(tool?.outputSchema));

// The Stripe SDK, with the placeholder it finds in its environment.
let r = await call(`
import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_API_KEY!);
console.log('key ' + process.env.STRIPE_API_KEY);
const customers = await stripe.customers.list({ limit: 2 });
console.log('customers: ' + customers.data.map((c) => c.email).join(','));
`);
let s = r.structuredContent;
check('stripe sdk call succeeds', !r.isError && s?.exit_status === 0 &&
      s.stdout.includes('customers: ada@example.com,grace@example.com'), brief(r));
check('the code sees a placeholder',
      /^key launch-placeholder-[0-9a-f]{32}$/m.test(s?.stdout ?? ''), brief(s?.stdout));
check('the result lists the request', s?.http_requests?.length === 1 &&
      s.http_requests[0].method === 'GET' && s.http_requests[0].host === 'api.stripe.com' &&
      s.http_requests[0].path === '/v1/customers' && s.http_requests[0].status === 200 &&
      s.http_requests[0].decision === 'allow' && s.http_requests[0].reason === '',
      brief(s?.http_requests));
check('the text lists the request',
      r.content?.[0]?.text?.includes('GET https://api.stripe.com/v1/customers 200'),
      brief(r.content));

// The attacker's own key, the victim's placeholder in the body: 403, listed as credential.
r = await call(`
const res = await fetch('https://api.stripe.com/v1/customers', { method: 'POST',
	headers: { authorization: 'Bearer sk_attacker_own',
		   'content-type': 'application/x-www-form-urlencoded' },
	body: 'stolen=' + process.env.STRIPE_API_KEY });
console.log('attacker ' + res.status + ' ' + (await res.text()));
`);
s = r.structuredContent;
check('the attacker\'s own key gets 403', /^attacker 403 .*credential/m.test(s?.stdout ?? ''),
      brief(s));
check('the refusal is listed', s?.http_requests?.length === 1 &&
      s.http_requests[0].method === 'POST' && s.http_requests[0].status === 403 &&
      s.http_requests[0].decision === 'deny' && s.http_requests[0].reason === 'credential',
      brief(s?.http_requests));

// Two calls at once, each its own paths, overlapping: each result lists only its own.
const both = (tag) => `
for (let i = 0; i < 4; i++) {
	const res = await fetch('https://api.stripe.com/v1/customers/cus_${tag}' + i, {
		headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
	await res.text();
	await new Promise((done) => setTimeout(done, 150));
}
console.log('done ${tag}');
`;
const [a, b] = await Promise.all([call(both('alpha')), call(both('beta'))]);
for (const [tag, res, other] of [['alpha', a, 'beta'], ['beta', b, 'alpha']]) {
	const list = res.structuredContent?.http_requests ?? [];
	check(`parallel call ${tag} lists its own requests`, list.length === 4 &&
	      list.every((x) => x.path.startsWith(`/v1/customers/cus_${tag}`)), brief(list));
	check(`parallel call ${tag} lists none of the other's`,
	      !list.some((x) => x.path.includes(other)), brief(list));
}
// One call's failure (its code crashes mid-request) leaves the next call's requests whole.
r = await call(`
fetch('https://api.stripe.com/v1/customers', {
	headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
setTimeout(() => process.abort(), 5);
`);
r = await call(`
const res = await fetch('https://api.stripe.com/v1/customers?limit=1', {
	headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
await res.text();
console.log('after ' + res.status);
`);
s = r.structuredContent;
check('a call after a crashed one', /^after 200$/m.test(s?.stdout ?? '') &&
      s.http_requests?.length === 1 && s.http_requests[0].path === '/v1/customers', brief(s));

// A call that aborts mid-request beside one making requests: the other's all succeed.
const steady = call(`
let ok = 0;
for (let i = 0; i < 5; i++) {
	const res = await fetch('https://api.stripe.com/v1/customers/cus_steady' + i, {
		headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
	await res.text();
	if (res.status !== 403 && res.status < 500)
		ok++;
	await new Promise((done) => setTimeout(done, 100));
}
console.log('steady ' + ok);
`);
const crash = call(`
for (let i = 0; i < 3; i++)
	fetch('https://api.stripe.com/v1/customers/cus_crash' + i, {
		headers: { authorization: 'Bearer ' + process.env.STRIPE_API_KEY } });
setTimeout(() => process.abort(), 150);
await new Promise((done) => setTimeout(done, 10000));
`);
const [st, cr] = await Promise.all([steady, crash]);
check('a call beside one that crashes mid-request', /^steady 5$/m.test(
	st.structuredContent?.stdout ?? '') && st.structuredContent.http_requests?.length === 5 &&
      st.structuredContent.http_requests.every((x) => x.path.includes('cus_steady')),
      brief(st.structuredContent));
check('the crashed call', cr.structuredContent?.signal === 'SIGABRT' &&
      !(cr.structuredContent.http_requests ?? []).some((x) => x.path.includes('steady')),
      brief(cr.structuredContent));

// The real key in no result (the run as a whole is grepped by the shell test).
check('the key in no result', key && !JSON.stringify([a, b, r, st, cr]).includes(key), 'found');

await client.close();
process.exit(failed ? 1 : 0);
