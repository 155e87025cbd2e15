// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp's type-check before a call runs, end to end with the official MCP TypeScript
// SDK's client: an unknown method, a wrong argument and a syntax error come back as
// type_errors (line, column, code, message) and the code does not run; lenient code (implicit
// any, Node's globals without @types/node) runs; "typecheck": false runs it anyway; a server
// whose --modules has no typescript runs the calls unchecked; with --pool 0 (each call
// cold) the calls are checked all the same. Run by
// tests/integration/test_mcp_typecheck.sh, over stdio and over Streamable HTTP
// (MCP_TRANSPORT=http, tests/mcp/connect.mjs).
//
// usage: [MCP_TRANSPORT=http] node typecheck.mjs MODULES_WITHOUT_TYPESCRIPT LAUNCH ARGS...  (ARGS: the server's
// command line after "launch", with --modules of modules that have typescript)
// Prints "ok NAME" or "not ok NAME: why" per check; exits 1 when any failed.
import { connect as connectTo } from './connect.mjs';

const [untyped, launch, ...args] = process.argv.slice(2);
let failed = 0;

function check(name, cond, why) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name}: ${why}`);
	}
}

const brief = (value) => JSON.stringify(value)?.slice(0, 700);

const connect = (serverArgs) => connectTo(launch, serverArgs, { name: 'launch-typecheck-e2e' });

function call(client, code, more = {}) {
	return client.callTool({ name: 'run_typescript', arguments: { code, ...more } }, undefined,
			       { timeout: 120000 });
}

const STRIPE = "import Stripe from 'stripe';\nconsole.log('ran');\nconst stripe = new Stripe('sk_test_x');\n";

{
	const server = await connect(args);
	const { client, stderr } = server;
	check('start says calls are type-checked', /calls are type-checked/.test(stderr()), stderr());
	const { tools } = await client.listTools();
	const tool = tools.find((t) => t.name === 'run_typescript');
	check('schema documents typecheck', tool?.inputSchema?.properties?.typecheck?.type === 'boolean' &&
	      tool.outputSchema?.properties?.type_errors?.type === 'array', brief(tool));

	let r = await call(client, `${STRIPE}const p = stripe.customers.lst({ limit: 2 });\n`);
	let s = r.structuredContent;
	let e = s?.type_errors?.[0];
	check('unknown method: not run', r.isError && s?.stdout === '' && s.exit_status === 1, brief(r));
	check('unknown method: where and why', s?.type_errors?.length === 1 && e.line === 4 &&
	      e.column === 28 && e.code === 'TS2551' && /'lst' does not exist/.test(e.message) &&
	      s.stderr.includes("main.mts:4:28 - error TS2551") &&
	      /type errors: the code did not run/.test(r.content[0].text), brief(s));

	r = await call(client, `${STRIPE}const p = stripe.customers.create({ email: 42 });\n`);
	s = r.structuredContent;
	e = s?.type_errors?.[0];
	check('wrong argument type: not run', r.isError && s?.stdout === '' && e?.line === 4 &&
	      /^TS23(22|45)$/.test(e.code) && /number/.test(e.message), brief(s));

	r = await call(client, `${STRIPE}const p = stripe.refunds.create({ charge: 'ch_1', amont: 3 });\n`);
	s = r.structuredContent;
	check('unknown parameter: not run', r.isError && s?.stdout === '' &&
	      s.type_errors?.[0]?.code === 'TS2561' && /amount/.test(s.type_errors[0].message), brief(s));

	r = await call(client, "console.log('ran');\nconst x = (;\n");
	s = r.structuredContent;
	check('syntax error: not run', r.isError && s?.stdout === '' && s.type_errors?.[0]?.line === 2 &&
	      /^TS1\d{3}$/.test(s.type_errors[0].code), brief(s));

	// Lenient: what runs fine is no error, whatever its types.
	r = await call(client, `
import { readFileSync } from 'node:fs';
import Stripe from 'stripe';
function untyped(a, b) { return a + b; }
let later;
later = untyped(1, 2);
const anything = JSON.parse('{"x": {"y": 1}}');
const stripe = new Stripe(process.env.NOT_SET ?? 'sk_test_x');
console.log('lenient', later, anything.x.y, typeof readFileSync, Buffer.from('a').length,
	    typeof stripe.customers.list, (globalThis as any).nothing ?? 'none');
`);
	s = r.structuredContent;
	check('lenient code runs', !r.isError && s?.stdout === 'lenient 3 1 function 1 function none\n' &&
	      !s.type_errors, brief(s));

	r = await call(client, `${STRIPE}const p = stripe.customers.lst({ limit: 2 });\n`, { typecheck: false });
	s = r.structuredContent;
	check('"typecheck": false runs it anyway', r.isError && s?.stdout === 'ran\n' && !s.type_errors &&
	      /stripe\.customers\.lst is not a function/.test(s.stderr), brief(s));

	let err = null;
	try {
		await call(client, "console.log(1);\n", { typecheck: 'no' });
	} catch (e) {
		err = e;
	}
	check('"typecheck": "no" is -32602', err?.code === -32602 && /typecheck/.test(err.message),
	      brief(err?.message ?? 'no error'));
	await server.close();
}

// --pool 0: every call starts cold, and is type-checked all the same.
{
	const server = await connect([...args, '--pool', '0']);
	const { client } = server;
	let r = await call(client, `${STRIPE}\nconst p = stripe.customers.lst({ limit: 2 });\n`);
	let s = r.structuredContent;
	const e = s?.type_errors?.[0];
	check('cold call: type errors, not run', r.isError && s?.stdout === '' && s.exit_status === 1 &&
	      s.type_errors?.length === 1 && e.line === 5 && e.column === 28 && e.code === 'TS2551' &&
	      /type errors: the code did not run/.test(r.content[0].text), brief(s));
	r = await call(client, `${STRIPE}console.log(typeof stripe.customers.list);\n`);
	s = r.structuredContent;
	check('cold call: checked clean, run', !r.isError && s?.stdout === 'ran\nfunction\n' &&
	      !s.type_errors, brief(s));
	r = await call(client, `${STRIPE}const p = stripe.customers.lst({ limit: 2 });\n`, { typecheck: false });
	s = r.structuredContent;
	check('cold call: "typecheck": false runs it', r.isError && s?.stdout === 'ran\n' &&
	      !s.type_errors && /is not a function/.test(s.stderr), brief(s));
	await server.close();
}

// Without typescript in --modules: said at start, and the calls run unchecked.
{
	const at = args.indexOf('--modules');
	const serverArgs = [...args];
	serverArgs[at + 1] = untyped;
	const server = await connect(serverArgs);
	const { client, stderr } = server;
	check('start says calls are not type-checked', /typescript is not in --modules: calls are not type-checked/.test(stderr()),
	      stderr());
	const r = await call(client, `${STRIPE}const p = stripe.customers.lst({ limit: 2 });\n`);
	const s = r.structuredContent;
	check('unchecked without typescript', r.isError && s?.stdout === 'ran\n' && !s.type_errors &&
	      /is not a function/.test(s.stderr), brief(s));
	await server.close();
}

process.exit(failed ? 1 : 0);
