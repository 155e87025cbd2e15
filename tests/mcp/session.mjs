// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp --sessions end to end, with the official MCP TypeScript SDK's client: a session's
// handle, its variables, imports and files kept across calls, one call at a time, its end on
// request and after --session-idle (nothing of it left: no process, cgroup or folder), an
// unknown handle, a session beside a call of its own, and sessions refused by a server
// without --sessions. Run by tests/integration/test_mcp_session.sh, over stdio and over
// Streamable HTTP (MCP_TRANSPORT=http, tests/mcp/connect.mjs).
//
// usage: [MCP_TRANSPORT=http] node session.mjs LAUNCH ARGS...   (the server's command line
// after "launch", without --sessions, which this adds where it needs it)
// Prints "ok NAME" or "not ok NAME: why" per check; exits 1 when any failed.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect as connectTo } from './connect.mjs';

const [launch, ...args] = process.argv.slice(2);
let failed = 0;

function check(name, cond, why) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name}: ${why}`);
	}
}

const brief = (value) => JSON.stringify(value).slice(0, 600);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(extra) {
	const server = await connectTo(launch, [...args, ...extra], { name: 'launch-session-e2e' });

	return { client: server.client, pid: server.pid, close: server.close };
}

function call(client, code, more = {}) {
	return client.callTool({ name: 'run_typescript', arguments: { code, ...more } }, undefined,
			       { timeout: 120000 });
}

const text = (r) => r.content?.map((c) => c.text).join('\n') ?? '';

// What a session's sandbox is on the host: its launch (a child of the server named
// mcp-SERVER-N, N the number in its folder's name), its cgroup of that name, its folder.
function sandboxOf(serverPid, folder) {
	const n = /\/call-(\d+)\./.exec(folder)?.[1];
	return { name: `mcp-${serverPid}-${n}`, folder };
}

function cgroupsNamed(name, dir = '/sys/fs/cgroup', depth = 0) {
	const found = [];
	let entries = [];

	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch {
		return found;
	}
	for (const e of entries) {
		if (!e.isDirectory())
			continue;
		if (e.name === name)
			found.push(`${dir}/${e.name}`);
		else if (depth < 4)
			found.push(...cgroupsNamed(name, `${dir}/${e.name}`, depth + 1));
	}
	return found;
}

function processesNamed(name) {
	return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
		try {
			return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(name);
		} catch {
			return false;
		}
	});
}

// Waits until nothing of the sandbox is left (at most 10 s); returns what still is.
async function leftOf(sandbox) {
	let left;

	for (let i = 0; i < 100; i++) {
		left = { processes: processesNamed(sandbox.name), cgroups: cgroupsNamed(sandbox.name),
			 folder: existsSync(sandbox.folder) };
		if (!left.processes.length && !left.cgroups.length && !left.folder)
			return null;
		await sleep(100);
	}
	return left;
}

const WHERE = "console.log('where', process.cwd());\n";

// --- a server with sessions ----------------------------------------------------------------
{
	const { client, pid, close } = await connect(['--sessions']);
	const { tools } = await client.listTools();
	const tool = tools.find((t) => t.name === 'run_typescript');
	check('schema documents sessions', tool?.inputSchema?.properties?.session?.type === 'string' &&
	      tool.inputSchema.properties.session_end?.type === 'boolean' &&
	      tool.outputSchema?.properties?.session?.type === 'string' &&
	      tool.outputSchema.properties.session_expires_s?.type === 'integer' &&
	      /session/.test(tool.description), brief(tool));

	let r = await call(client, `
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
${WHERE}
writeFileSync('kept.txt', 'written by call 1');
const kept: number = await Promise.resolve(41);
let counter = 1;
function twice(x: number): number { return 2 * x; }
(globalThis as any).onGlobal = 'global';
console.log('pid', process.pid);
`, { session: 'new' });
	let s = r.structuredContent;
	const handle = s?.session;
	check('new gives a handle', !r.isError && /^[0-9a-f]{32}$/.test(handle ?? '') &&
	      s.session_expires_s === 300, brief(r));
	const folder = /where (\S+)/.exec(s?.stdout ?? '')?.[1] ?? '';
	const pid1 = /pid (\d+)/.exec(s?.stdout ?? '')?.[1];
	const sandbox = sandboxOf(pid, folder);

	r = await call(client, `
counter++;
console.log('kept', kept + 1, counter, twice(counter), path.basename('/a/b.txt'), onGlobal);
console.log('file', readFileSync('kept.txt', 'utf8'));
console.log('pid', process.pid);
`, { session: handle });
	s = r.structuredContent;
	check('variables and imports kept', !r.isError && s?.session === handle &&
	      s.stdout.includes('kept 42 2 4 b.txt global\n'), brief(r));
	check('file and process kept', s?.stdout?.includes('file written by call 1\n') &&
	      s.stdout.includes(`pid ${pid1}\n`), brief(s));

	// A call of a session that fails leaves the session as it was.
	// Its stack names the call and the line of its own code (the type's lines dropped by
	// esbuild are counted).
	r = await call(client, `interface Shape {
	kept: string;
}
const kept = 'declared again';
console.log(kept);
throw new Error('thrown at line 6');
`, { session: handle });
	s = r.structuredContent;
	check('an error is the call\'s, not the session\'s', r.isError && s?.exit_status === 1 &&
	      s.stdout === 'declared again\n' && /Error: thrown at line 6/.test(s.stderr) &&
	      /call-3\.mts:6:\d+/.test(s.stderr) && s.session_expires_s === 300, brief(r));

	// One call at a time: a second call of the session while one runs is refused.
	{
		const slow = call(client, "await new Promise((r) => setTimeout(r, 2000));\nconsole.log('slow done');\n",
				  { session: handle });
		await sleep(500);
		const busy = await call(client, "console.log('second');\n", { session: handle });
		const first = await slow;
		check('concurrent call refused as busy', busy.isError && /busy/.test(text(busy)) &&
		      !first.isError && first.structuredContent?.stdout === 'slow done\n', brief({ busy, first }));
	}

	// A session beside a call of its own: both run at once, and the other call sees nothing of
	// the session's.
	{
		const t0 = Date.now();
		const [inSession, alone] = await Promise.all([
			call(client, "await new Promise((r) => setTimeout(r, 1500));\nconsole.log('session', counter);\n",
			     { session: handle }),
			call(client, `
import { existsSync } from 'node:fs';
await new Promise((r) => setTimeout(r, 1500));
console.log('alone', typeof (globalThis as any).onGlobal, existsSync('kept.txt'), process.cwd() === ${JSON.stringify(folder)});
`),
		]);
		const wall = Date.now() - t0;
		check('a session beside a normal call', !inSession.isError && !alone.isError &&
		      inSession.structuredContent.stdout === 'session 2\n' &&
		      alone.structuredContent.stdout === 'alone undefined false false\n' &&
		      alone.structuredContent.session === undefined && wall < 2900,
		      brief({ wall, inSession: inSession.structuredContent, alone: alone.structuredContent }));
	}

	// Ended on request: the call's code runs, then nothing of its sandbox is left.
	r = await call(client, "console.log('last', counter);\n", { session: handle, session_end: true });
	s = r.structuredContent;
	check('session_end answers', !r.isError && s?.stdout === 'last 2\n' && s.session === handle &&
	      s.session_expires_s === 0, brief(r));
	let left = await leftOf(sandbox);
	check('session_end leaves nothing', sandbox.folder && !left, brief({ sandbox, left }));
	r = await call(client, "console.log('after');\n", { session: handle });
	check('an ended handle is refused', r.isError && /ended/.test(text(r)) &&
	      !r.structuredContent, brief(r));

	// An unknown handle.
	r = await call(client, "console.log('x');\n", { session: '0123456789abcdef0123456789abcdef' });
	check('unknown handle', r.isError && /unknown session/.test(text(r)), brief(r));
	r = await call(client, "console.log('x');\n", { session: 42 });
	check('a handle that is not a string', r.isError && /"session" must be/.test(text(r)), brief(r));

	// process.exit ends the session with its call.
	r = await call(client, `${WHERE}console.log('x');\n`, { session: 'new' });
	const exiting = r.structuredContent?.session;
	const exitSandbox = sandboxOf(pid, /where (\S+)/.exec(r.structuredContent?.stdout ?? '')?.[1] ?? '');
	r = await call(client, "console.log('bye');\nprocess.exit(7);\n", { session: exiting });
	s = r.structuredContent;
	check('process.exit ends the session', r.isError && s?.exit_status === 7 && s.stdout === 'bye\n' &&
	      s.session_expires_s === 0, brief(r));
	left = await leftOf(exitSandbox);
	check('an exited session leaves nothing', !left, brief({ exitSandbox, left }));

	// Type-checked (--modules has typescript), each call with the names the session's earlier
	// calls declared. A first call with a type error does not run: what it would have
	// declared and written is not there for the next call.
	r = await call(client, `import { writeFileSync } from 'node:fs';
import Stripe from 'stripe';
writeFileSync('refused.txt', 'ran');
let refused = 'ran';
const stripe = new Stripe('sk_test_x');
const p = stripe.customers.lst({ limit: 2 });
`, { session: 'new' });
	s = r.structuredContent;
	const typed = s?.session;
	let e = s?.type_errors?.[0];
	check('a session\'s first call is type-checked', r.isError && s?.stdout === '' &&
	      s.exit_status === 1 && s.type_errors?.length === 1 && e.line === 6 && e.column === 28 &&
	      e.code === 'TS2551' && /type errors: the code did not run/.test(text(r)) &&
	      /^[0-9a-f]{32}$/.test(typed ?? '') && s.session_expires_s === 300, brief(r));
	r = await call(client, `import { existsSync } from 'node:fs';
import Stripe from 'stripe';
console.log('refused ran?', existsSync('refused.txt'), typeof refused);
const stripe = new Stripe('sk_test_x');
const limit: number = 2;
function label(n: number): string { return \`limit \${n}\`; }
`, { session: typed });
	s = r.structuredContent;
	check('a type error leaves the session, its code not run', !r.isError &&
	      s?.stdout === 'refused ran? false undefined\n' && s.session === typed && !s.type_errors,
	      brief(r));
	r = await call(client, "console.log(label(limit + 1), typeof stripe.customers.list);\n",
		       { session: typed });
	s = r.structuredContent;
	check('names of earlier calls: checked clean, run', !r.isError &&
	      s?.stdout === 'limit 3 function\n' && !s.type_errors, brief(r));
	r = await call(client, "console.log('not run');\n\nconst q = stripe.customers.create({ email: 42 });\n",
		       { session: typed });
	s = r.structuredContent;
	e = s?.type_errors?.[0];
	check('a wrong argument to an earlier call\'s client: at its own line', r.isError &&
	      s?.stdout === '' && s.type_errors?.length === 1 && e.line === 3 &&
	      /^TS23(22|45)$/.test(e.code) && /number/.test(e.message) &&
	      s.stderr.includes(`main.mts:3:${e.column} - error ${e.code}`), brief(s));
	// A brace left open: its error is at the end of the file checked (earlier calls' code after
	// it), counted all the same.
	r = await call(client, "if (limit > 1) {\n\tconsole.log('open');\n", { session: typed });
	s = r.structuredContent;
	check('a syntax error at its code\'s end', r.isError && s?.stdout === '' &&
	      /^TS1\d{3}$/.test(s.type_errors?.[0]?.code ?? '') && s.type_errors[0].line <= 3, brief(s));
	// Declared again with another type: the call's own declaration is the one checked.
	r = await call(client, "const limit = 'two';\nconsole.log(limit.toUpperCase(), label(2));\n",
		       { session: typed });
	s = r.structuredContent;
	check('a name declared again is checked as this call declares it', !r.isError &&
	      s?.stdout === 'TWO limit 2\n' && !s.type_errors, brief(r));
	r = await call(client, "console.log('unchecked', typeof stripe.customers.lst);\nlet after = 1;\n",
		       { session: typed, typecheck: false });
	s = r.structuredContent;
	check('"typecheck": false in a session runs it', !r.isError &&
	      s?.stdout === 'unchecked undefined\n' && !s.type_errors, brief(r));
	r = await call(client, "console.log('after', after, limit);\n", { session: typed, session_end: true });
	s = r.structuredContent;
	check('an unchecked call\'s names are known to the next', !r.isError &&
	      s?.stdout === 'after 1 two\n' && s.session_expires_s === 0, brief(r));
	await close();
}

// --- a short --session-idle ----------------------------------------------------------------
{
	const { client, pid, close } = await connect(['--sessions', '--session-idle', '2']);
	let r = await call(client, WHERE, { session: 'new' });
	const handle = r.structuredContent?.session;
	const sandbox = sandboxOf(pid, /where (\S+)/.exec(r.structuredContent?.stdout ?? '')?.[1] ?? '');
	check('session_expires_s is --session-idle', r.structuredContent?.session_expires_s === 2, brief(r));
	// Within its idle time a call keeps it (and starts its clock again).
	await sleep(1200);
	r = await call(client, "console.log('still');\n", { session: handle });
	check('a call within the idle time', !r.isError && r.structuredContent?.stdout === 'still\n', brief(r));
	await sleep(3500);
	r = await call(client, "console.log('too late');\n", { session: handle });
	check('expired after --session-idle', r.isError && /expired/.test(text(r)), brief(r));
	const left = await leftOf(sandbox);
	check('an expired session leaves nothing', sandbox.folder && !left, brief({ sandbox, left }));
	await close();
}

// --- a server without --sessions -----------------------------------------------------------
{
	const { client, close } = await connect([]);
	const { tools } = await client.listTools();
	const tool = tools.find((t) => t.name === 'run_typescript');
	check('no session in the schema without --sessions', !tool?.inputSchema?.properties?.session,
	      brief(tool?.inputSchema));
	let r = await call(client, "console.log('x');\n", { session: 'new' });
	check('refused without --sessions', r.isError && /--sessions/.test(text(r)) &&
	      !r.structuredContent, brief(r));
	r = await call(client, "console.log('fresh');\n");
	check('calls still run', !r.isError && r.structuredContent?.stdout === 'fresh\n', brief(r));
	await close();
}

process.exit(failed ? 1 : 0);
