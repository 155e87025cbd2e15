// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp's prepared sandbox: Node with tsx's loader and the SDKs imported, waiting for its
// call's code (built into launch as a string; tests/bench/mcp_bench runs it bare).
//
// Standard input is a socket to the server. "ready" goes back once everything is loaded; the
// end of the input is the server's "go": main.mts of the working folder is imported then.
// When the event loop is empty or the code exits, "done CODE" goes back on the socket: the
// server answers then, without waiting for Node's own exit (hundreds of ms with tsx).
// stdout and stderr are pipes, which Node writes synchronously: they hold all by then.
import { register } from 'tsx/esm/api';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateKeyPairSync, pbkdf2, sign } from 'node:crypto';
import https from 'node:https';
import tls, { createSecureContext } from 'node:tls';
import { Duplex } from 'node:stream';
import { isIP, Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { existsSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { Session } from 'node:inspector';
import { inspect } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// LAUNCH_MCP_TRACE=1 (tests/bench/mcp_bench, MCP_BENCH_TRACE=1): the times of the call's
// steps (its go, each HTTPS request's socket, look-up, connect, handshake and response, its
// end) as one line on stderr before "done"; globalThis.__mark(name) adds one from the code.
const trace = process.env.LAUNCH_MCP_TRACE ? [] : null;
const mark = (what) => trace?.push([what, performance.timeOrigin + performance.now()]);
if (trace) {
	const request = https.request;

	globalThis.__mark = mark;
	https.request = function (...args) {
		const req = request.apply(this, args);

		mark('request');
		req.once('socket', (socket) => {
			mark('socket');
			socket.once('lookup', () => mark('lookup'));
			socket.once('connect', () => mark('connect'));
			socket.once('secureConnect', () => mark('tls'));
		});
		req.once('response', (res) => {
			mark('response');
			res.once('end', () => mark('body'));
		});
		return req;
	};
}

// A request through each SDK's own request path, to the in-memory server below (agent: its
// https.Agent). SDKs that use fetch (undici) take no agent: their client alone is made.
const REQUESTS = {
	stripe: (Client, agent) =>
		new Client('sk_test_launch_warm_up', {
			httpClient: Client.createNodeHttpClient(agent),
			maxNetworkRetries: 0,
		}).balance.retrieve(),
};
const sdks = {};

// A client of each SDK, made and dropped: the first one sets up the SDK's own state.
const CLIENTS = {
	stripe: (Client) => new Client('sk_test_launch_warm_up'),
	openai: (Client) => new Client({ apiKey: 'launch-warm-up' }),
	'@anthropic-ai/sdk': (Client) => new Client({ apiKey: 'launch-warm-up' }),
};

// The name of the throwaway certificate of the in-memory server: never resolved, never
// connected to.
const WARM_NAME = 'launch-warm-up.invalid';
const WARM_REQUESTS_MS = 5000;

// DER: a tag, its length, its content.
function der(tag, ...parts) {
	const body = Buffer.concat(parts);
	const n = body.length;
	const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];

	return Buffer.concat([Buffer.from([tag, ...len]), body]);
}

// A self-signed certificate for WARM_NAME (X.509 v3, P-256), made here: Node has no API for
// it. Its key is never written anywhere and dies with the runner.
function selfSigned() {
	const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
	const seq = (...parts) => der(0x30, ...parts);
	const oid = (hex) => der(0x06, Buffer.from(hex, 'hex'));
	const time = (ms) =>
		der(0x18, Buffer.from(new Date(ms).toISOString().replace(/[-:T]|\.\d+/g, '')));
	const ecdsaSha256 = seq(oid('2a8648ce3d040302'));
	const name = seq(der(0x31, seq(oid('550403'), der(0x0c, Buffer.from(WARM_NAME)))));
	const san = seq(oid('551d11'), der(0x04, seq(der(0x82, Buffer.from(WARM_NAME)))));
	const tbs = seq(der(0xa0, der(0x02, Buffer.from([2]))), der(0x02, Buffer.from([1])),
			ecdsaSha256, name, seq(time(Date.now() - 3600e3), time(Date.now() + 86400e3)),
			name, publicKey.export({ type: 'spki', format: 'der' }), der(0xa3, seq(san)));
	const cert = seq(tbs, ecdsaSha256,
			 der(0x03, Buffer.from([0]), sign('sha256', tbs, privateKey)));

	return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
		 cert: `-----BEGIN CERTIFICATE-----\n${cert.toString('base64')}\n-----END CERTIFICATE-----\n` };
}

// Two connected streams in this process (Node 20 has no stream.duplexPair).
function duplexPair() {
	const ends = [];

	for (let i = 0; i < 2; i++)
		ends.push(new Duplex({
			read() {},
			write(chunk, encoding, done) {
				ends[1 - i].push(chunk);
				done();
			},
			final(done) {
				ends[1 - i].push(null);
				done();
			},
		}));
	return ends;
}

// What a process's first HTTPS request pays once (Node's TLS, HTTP client and parser code
// compiled, the SDK's request path run), paid here without a connection: a TLS handshake and
// requests over an in-memory stream pair to an HTTPS server in this process. An https.Agent
// whose connections are that pair: nothing reaches the network, whatever host is asked for.
async function warmRequests() {
	const { key, cert } = selfSigned();
	const server = https.createServer({ key, cert }, (req, res) => {
		req.resume();
		res.setHeader('content-type', 'application/json');
		res.end('{}');
	});
	class LoopAgent extends https.Agent {
		createConnection() {
			const [near, far] = duplexPair();

			server.emit('connection', far);
			return tls.connect({ socket: near, servername: WARM_NAME, ca: cert });
		}
	}
	const agent = new LoopAgent();
	const accepted = new Set();

	let timer;

	server.on('secureConnection', (socket) => accepted.add(socket));
	// A warm-up that fails or stalls only leaves the call to pay for it.
	try {
		await Promise.race([
			(async () => {
				await new Promise((resolve, reject) => {
					https.get({ host: WARM_NAME, path: '/', agent }, (res) =>
						res.resume().on('end', resolve)).on('error', reject);
				});
				for (const [name, request] of Object.entries(REQUESTS))
					if (sdks[name])
						await request(sdks[name], agent);
			})(),
			new Promise((resolve) => {
				timer = setTimeout(resolve, WARM_REQUESTS_MS);
			}),
		]);
	} catch {}
	clearTimeout(timer);
	agent.destroy();
	for (const socket of accepted)
		socket.destroy();
	server.close();
}

// --- Sessions (launch mcp --sessions) -------------------------------------------------------
// A session's calls run one after another in this process, each its code evaluated as a
// script of the one realm in V8's REPL mode (the inspector's Runtime.evaluate, as a debugger's
// console does): top-level await works, and the top-level declarations of one call (let,
// const, class, function, an import's names) are there for the next, declared again freely.
// A script has no static import: the call's own leading imports become dynamic ones. The
// call ends when its code's evaluation has settled; what it left pending (a timer, a
// request) goes on between calls. "done CODE" answers each "run FILE" ("runnocheck FILE":
// "typecheck": false), or "types" when its type-check found errors (the code not run, the
// session going on); "exit CODE" is the process's end (process.exit, a crash): the session
// ends with it.

// esbuild, which tsx brings: from --modules, or from beside tsx (a layout without hoisting).
async function loadEsbuild() {
	try {
		return await import('esbuild');
	} catch {
		const { createRequire } = await import('node:module');
		const near = createRequire(fileURLToPath(import.meta.resolve('tsx/esm/api')));

		return await import(pathToFileURL(near.resolve('esbuild')).href);
	}
}

// One import statement (as esbuild prints it) as the same bindings from a dynamic import, on
// as many lines, so that the lines after it keep their numbers.
function importAsScript(statement, n) {
	const pad = '\n'.repeat(statement.split('\n').length - 1);
	const bare = /^import\s*("[^"]*")\s*(?:with\s*\{[^}]*\}\s*)?;$/.exec(statement);
	const m = /^import\s+([\s\S]+?)\s+from\s*("[^"]*")\s*(?:with\s*\{[^}]*\}\s*)?;$/.exec(statement);

	if (bare)
		return `await __launch_import(${bare[1]});${pad}`;
	if (!m)
		return null;
	const ns = `__launch_m${n}`;
	const out = [`const ${ns} = await __launch_import(${m[2]});`];
	const clause = /^(?:([\w$]+)\s*(?:,\s*|$))?(?:\*\s*as\s+([\w$]+)|\{([\s\S]*)\})?$/.exec(m[1].trim());

	if (!clause)
		return null;
	if (clause[1])
		out.push(`const ${clause[1]} = ${ns}.default;`);
	if (clause[2])
		out.push(`const ${clause[2]} = ${ns};`);
	if (clause[3] !== undefined)
		out.push(`const {${clause[3].replace(/\s+as\s+/g, ': ').replace(/\n/g, ' ')}} = ${ns};`);
	return out.join(' ') + pad;
}

// esbuild's output as a REPL-mode script: the leading imports rewritten, "export" dropped.
function moduleAsScript(js) {
	const lines = js.split('\n');
	const out = [];
	let i = 0, n = 0;

	for (; i < lines.length; i++) {
		if (!lines[i].startsWith('import ') && !lines[i].startsWith('import{'))
			break;
		let end = i;
		while (end < lines.length - 1 && !lines[end].endsWith(';'))
			end++;
		const script = importAsScript(lines.slice(i, end + 1).join('\n'), n++);
		if (script === null)
			break;
		out.push(script);
		i = end;
	}
	for (; i < lines.length; i++) {
		let line = lines[i];

		if (/^export\s*\{[^}]*\}\s*(from\s*"[^"]*"\s*)?;$/.test(line) || /^export\s*\*/.test(line))
			line = '';
		else if (/^export\s*\{\s*$/.test(line)) {
			out.push('');
			while (i < lines.length - 1 && !/^\}/.test(lines[i]))
				out.push(''), i++;
			continue;
		} else
			line = line.replace(/^export\s+(default\s+)?/, '');
		out.push(line);
	}
	return STRICT + out.join('\n');
}

// esbuild's source map of each call (call-N.mts), decoded: per line of the script, its
// [column, source line, source column] segments. A stack frame's place in a script is then
// told as the line and column of the call's own code (esbuild drops type-only lines).
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const STRICT = '"use strict";';
const sourceMaps = new Map();

function decodeMappings(mappings) {
	const lines = [];
	let srcLine = 0, srcCol = 0, src = 0;

	for (const line of mappings.split(';')) {
		const segments = [];
		let col = 0;

		for (const segment of line.split(',').filter(Boolean)) {
			const values = [];

			for (let i = 0, value = 0, shift = 0; i < segment.length; i++) {
				const digit = BASE64.indexOf(segment[i]);

				value += (digit & 31) << shift;
				shift += 5;
				if (digit & 32)
					continue;
				values.push(value & 1 ? -(value >>> 1) : value >>> 1);
				value = shift = 0;
			}
			col += values[0];
			if (values.length < 4)
				continue;
			src += values[1];
			srcLine += values[2];
			srcCol += values[3];
			segments.push([col, srcLine, srcCol]);
		}
		lines.push(segments);
	}
	return lines;
}

function mapStack(text) {
	return text.replace(/\b(call-\d+\.mts):(\d+):(\d+)/g, (all, file, line, col) => {
		const segments = sourceMaps.get(file)?.[line - 1];
		let c = col - 1 - (line === '1' ? STRICT.length : 0), best = segments?.[0];

		for (const segment of segments ?? [])
			if (segment[0] <= c)
				best = segment;
		return best ? `${file}:${best[1] + 1}:${best[2] + Math.max(0, c - best[0]) + 1}` : all;
	});
}

// An error as Node would report it, without the runner's own frames.
function describe(details) {
	const ex = details.exception;
	const text = ex?.description ?? String(ex?.value ?? details.text);

	return mapStack(text.replace(/\n\s+at Session\.post \(node:inspector[\s\S]*$/, ''));
}

async function runSession(pending) {
	const { transform } = await loadEsbuild();
	const session = new Session();
	const evaluate = (expression) => new Promise((resolve, reject) =>
		session.post('Runtime.evaluate', { expression, replMode: true, awaitPromise: true },
			     (error, result) => (error ? reject(error) : resolve(result))));
	const here = pathToFileURL(process.cwd() + '/');
	const lines = [];
	// The code of the calls that ran, the latest first: what the type-check sees them declare.
	const ran = [];
	let running = null, wake = null, calls = 0;

	session.connect();
	// A relative specifier is the call folder's, a bare one --modules' (as main.mts's are).
	Object.defineProperty(globalThis, '__launch_import', {
		value: (spec) => import(/^\.{0,2}\//.test(spec) ? new URL(spec, here).href : spec),
	});
	process.on('exit', (code) => {
		try {
			writeSync(0, `exit ${code ?? 0}\n`);
		} catch {}
	});
	// Reported, not fatal: the session lives on; a call running then fails.
	process.on('uncaughtException', (error) => {
		if (process.listenerCount('uncaughtException') > 1)
			return;
		writeSync(2, `${mapStack(inspect(error))}\n`);
		if (running)
			running.failed = true;
	});
	const input = new Socket({ fd: 0, readable: true, writable: false });
	input.setEncoding('latin1');
	input.on('data', (chunk) => {
		pending += chunk;
		for (let nl; (nl = pending.indexOf('\n')) >= 0; pending = pending.slice(nl + 1))
			lines.push(pending.slice(0, nl));
		wake?.();
	});
	// The server ended the session, or is gone.
	input.on('end', () => process.exit(0));
	input.on('error', () => process.exit(0));
	input.emit('data', '');
	for (;;) {
		while (!lines.length)
			await new Promise((resolve) => (wake = resolve));
		const command = /^(run|runnocheck) (.+)$/.exec(lines.shift());
		if (!command)
			process.exit(125);
		const file = command[2], name = `call-${++calls}.mts`;
		let source;
		running = { failed: false };
		try {
			source = readFileSync(file, 'utf8');
			if (typeCheck && command[1] === 'run' && typeErrors(source, ran)) {
				running = null;
				continue;
			}
			const { code, map } = await transform(source, {
				loader: 'ts', sourcefile: name, sourcemap: 'external',
				tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } } });
			sourceMaps.set(name, decodeMappings(JSON.parse(map).mappings));
			ran.unshift(source);
			const reply = await evaluate(`${moduleAsScript(code)}\n//# sourceURL=${name}`);

			if (reply.exceptionDetails) {
				writeSync(2, `${describe(reply.exceptionDetails)}\n`);
				running.failed = true;
			}
		} catch (error) {
			writeSync(2, `${error?.message ?? error}\n`);
			running.failed = true;
		}
		const status = running.failed ? 1 : Number(process.exitCode ?? 0) & 255;
		process.exitCode = undefined;
		running = null;
		writeSync(0, `done ${status}\n`);
	}
}

// --- Type-check before running (LAUNCH_MCP_TYPECHECK: typescript is in --modules) ------------
// TypeScript's compiler, kept warm here with the SDKs' declarations loaded (a root file that
// imports them, so that they stay in the program whatever a call imports): a call's main.mts
// is one more root file, checked alone, the program rebuilt around it (oldProgram) with every
// other file reused. Lenient: not strict, implicit any allowed, the declarations' own errors
// skipped, and of the errors only those a run would trip on too (an unknown method or
// property, a wrong argument, a call of what is not a function, a syntax error) count; names
// that only Node's types would declare (process, console, node:fs without @types/node) are
// not errors. The code does not run when one is found: "types" goes back instead of "done".
const TYPE_ERRORS = new Set([2322, 2339, 2345, 2349, 2351, 2353, 2551, 2554, 2555, 2556,
			     2559, 2561, 2739, 2740, 2741, 2769]);
const TYPE_ERRORS_MAX = 20;
const TYPE_PROBE_ROUNDS = 8;
// What the prepared runner checks before its call, per SDK it preloads (see typeChecker).
const TYPE_PROBES = {
	stripe: `import Stripe from 'stripe';
const stripe = new Stripe('sk_test_launch_warm_up');
const created = stripe.customers.create({ email: 'a@example.com', metadata: { k: 'v' } });
const listed = await stripe.customers.list({ limit: 1 });
console.log(listed.data.map((c) => c.email), created, stripe.customers.lst, stripe.refunds.create({ amont: 1 }));
`,
	openai: `import OpenAI from 'openai';
const openai = new OpenAI({ apiKey: 'launch-warm-up' });
const done = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
console.log(done.choices[0].message.content, openai.chat.completion);
`,
	'@anthropic-ai/sdk': `import Anthropic from '@anthropic-ai/sdk';
const anthropic = new Anthropic({ apiKey: 'launch-warm-up' });
const reply = await anthropic.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] });
console.log(reply.content, anthropic.messages.creat);
`,
};

async function typeChecker() {
	const ts = (await import('typescript')).default;
	const dir = process.cwd();
	const file = `${dir}/main.mts`, sdks = `${dir}/launch-sdk-types.mts`;
	const imports = (process.env.LAUNCH_MCP_PRELOAD ?? '').split(',').filter(Boolean)
		.map((name, i) => `import * as sdk${i} from '${name}';\nexport { sdk${i} };\n`).join('');
	const options = {
		target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
		moduleResolution: ts.ModuleResolutionKind.NodeNext,
		moduleDetection: ts.ModuleDetectionKind.Force, strict: false, noImplicitAny: false,
		skipLibCheck: true, noEmit: true, allowImportingTsExtensions: true,
		allowJs: false, types: [], lib: ['lib.es2023.d.ts'],
	};
	// The SDKs' files do not change while the runner lives: read, parsed and bound once, the
	// same SourceFile objects handed to each program (which reuses them from the old one).
	const memo = (fn) => {
		const seen = new Map();
		return (key) => {
			if (!seen.has(key))
				seen.set(key, fn(key));
			return seen.get(key);
		};
	};
	const host = ts.createCompilerHost(options, true);
	const parse = host.getSourceFile.bind(host);
	const read = memo(host.readFile.bind(host));
	const sources = new Map();
	let code = 'export {};\n', program;

	host.getSourceFile = (name, language, onError, fresh) => {
		if (name === file)
			return ts.createSourceFile(name, code, language, true);
		if (!sources.has(name))
			sources.set(name, name === sdks ? ts.createSourceFile(name, imports, language, true)
				    : parse(name, language, onError, fresh));
		return sources.get(name);
	};
	host.readFile = (name) => (name === file ? code : name === sdks ? imports : read(name));
	host.fileExists = memo((name) => name === file || name === sdks || ts.sys.fileExists(name));
	host.directoryExists = memo(ts.sys.directoryExists);
	host.getDirectories = memo(ts.sys.getDirectories);
	host.realpath = memo(ts.sys.realpath);

	// Checks source as main.mts: the errors that count, at most TYPE_ERRORS_MAX. after: the
	// code of a session's earlier calls, put after the call's own (see runSession), whose
	// errors are not this call's: only those that start within source count (by position:
	// TypeScript ends lines at CR, U+2028 and U+2029 too, which a count of \n would miss).
	const check = (source, after = '') => {
		const place = (d) => {
			const at = d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0)
					  : { line: 0, character: 0 };
			return { line: at.line + 1, column: at.character + 1, code: `TS${d.code}`,
				 message: ts.flattenDiagnosticMessageText(d.messageText, ' ').slice(0, 400) };
		};
		const mine = (d) => !after || (d.start ?? 0) < source.length;

		// A line of its own between them: the call's last statement ends there.
		code = after ? `${source}\n;\n${after}` : source;
		program = ts.createProgram({ rootNames: [sdks, file], options, host, oldProgram: program });
		const main = program.getSourceFile(file);
		const syntax = program.getSyntacticDiagnostics(main);
		let found = syntax.filter(mine).map(place);
		// One past its lines (a brace the call left open, seen at the file's end): the call's
		// syntax checked alone, where the error falls within it.
		if (!found.length && syntax.length)
			return check(source);
		if (!found.length)
			found = program.getSemanticDiagnostics(main).filter((d) => TYPE_ERRORS.has(d.code))
				.filter(mine).map(place);
		return found.slice(0, TYPE_ERRORS_MAX);
	};
	// Each program has a checker of its own, but the compiler's code is V8's to compile and
	// optimise as it runs: a call's check after two probes took 90 to 300 ms here, after
	// eight 28 to 44 ms. So the probes run what a call's check does (a client made, its methods
	// called with literals, an unknown one, a wrong type, errors formatted), each in a program
	// of its own, TYPE_PROBE_ROUNDS times. Unless a call waits already: the server writes its
	// main.mts when it takes a runner not yet ready, and on a loaded machine the rounds (a
	// second and more of CPU) would cost that call more than its check's slower start.
	for (let round = 0; round < TYPE_PROBE_ROUNDS && !existsSync(file); round++)
		for (const name of Object.keys(TYPE_PROBES))
			if (imports.includes(`'${name}'`))
				check(`${TYPE_PROBES[name]}const probe${round}: number = 'x';\n`);
	check(`const generic = JSON.parse('{}');\nconsole.log(generic.x, [1].map((n) => n + 1));\n`);
	// The probes' garbage collected now rather than in the call (a full collection of this
	// heap, 150 MB, is 100 ms and more).
	setFlagsFromString('--expose-gc');
	runInNewContext('gc')();
	return check;
}

// Checks a call's code: on errors, says them (on stderr, in .launch-type-errors.json for the
// server, "types" on the socket) and is true: the code is not to run. earlier: the code of a
// session's calls that ran, the latest first, put after this call's own, so that the names
// they declared are known and, where this call declares one again, its own declaration is the
// first (the one TypeScript types the name by, as the REPL's latest one is the one that
// counts); that they are declared again and used before their declaration in the file is no
// error that counts (TS2451, TS2300, TS2448 are not among TYPE_ERRORS).
function typeErrors(source, earlier = []) {
	let errors;

	// The checker failing (its own bug, or a session's code having changed what it relies on:
	// it runs in the code's realm) is no error of the code's: said, and the call runs.
	try {
		errors = typeCheck(source, earlier.join('\n;\n'));
	} catch (error) {
		writeSync(2, `launch mcp: the type-check failed (${error?.message ?? error}): the code runs unchecked\n`);
		return false;
	}

	if (!errors.length)
		return false;
	for (const e of errors)
		writeSync(2, `main.mts:${e.line}:${e.column} - error ${e.code}: ${e.message}\n`);
	writeSync(2, 'type errors: the code did not run ("typecheck": false runs it anyway)\n');
	writeFileSync('.launch-type-errors.json', JSON.stringify(errors));
	writeSync(0, 'types\n');
	return true;
}

// Before the SDKs: imported through tsx's loader, as the code's imports of them will be (the
// same module, not a second copy).
register();
for (const name of (process.env.LAUNCH_MCP_PRELOAD ?? '').split(',').filter(Boolean)) {
	const sdk = await import(name);
	sdks[name] = sdk.default;
	try {
		CLIENTS[name]?.(sdk.default);
	} catch {}
}
// Where the checker cannot be had, the calls run unchecked: the server said so at its start.
let typeCheck = null;
if (process.env.LAUNCH_MCP_TYPECHECK)
	typeCheck = await typeChecker().catch((error) => {
		writeSync(2, `launch mcp: type-check: ${error?.message ?? error}\n`);
		return null;
	});
delete process.env.LAUNCH_MCP_PRELOAD;
delete process.env.LAUNCH_MCP_TYPECHECK;
delete process.env.LAUNCH_MCP_TRACE;
// What a process's first request pays for once, paid here instead of in the call: esbuild's
// service (a warm-up file through tsx), libuv's threads, the CA store, the address regular
// expressions that every request tests its host name with (compiled at their first use:
// 15 ms on a loaded machine), glibc's name service set-up (a name in /etc/hosts: no DNS, and
// one address, which glibc does not sort by connecting UDP sockets), Node's TLS and HTTP code
// and the SDK's request path (warmRequests: in memory). Its nscd attempts are refused; the
// server leaves them out of the call's result.
await import(new URL('./warmup.mts', import.meta.url).href);
await new Promise((done) => pbkdf2('', '', 1, 8, 'sha256', done));
createSecureContext();
isIP('api.example');
await lookup('localhost', { family: 4 }).catch(() => {});
await warmRequests();
writeSync(0, 'ready\n');
// The server's go: the end of the input (a call of its own), or "session\n" (a session's
// first call, whose commands follow on the same socket).
const buf = Buffer.alloc(64);
let heard = '';
for (let n; !heard.includes('\n') && (n = readSync(0, buf)) > 0;)
	heard += buf.toString('latin1', 0, n);
if (heard.startsWith('session\n'))
	await runSession(heard.slice(8));
// "nocheck\n" before the end: the call's "typecheck": false.
if (typeCheck && heard !== 'nocheck\n' && typeErrors(readFileSync('main.mts', 'utf8')))
	process.exit(1);
trace?.splice(0); // the warm-up's requests
mark('go');
let told = false;
const tell = (code) => {
	if (told)
		return;
	told = true;
	mark('done');
	if (trace)
		writeSync(2, `launch-trace ${JSON.stringify(trace)}\n`);
	try {
		writeSync(0, `done ${code ?? 0}\n`);
	} catch {}
};
// Node's own report of an uncaught error comes after the 'exit' handlers, so after "done":
// too late for the result. Without a handler of the code's, the error is reported here, as
// Node would (its stack), and the process exits 1, as Node's would.
const uncaught = (error) => {
	writeSync(2, `${inspect(error)}\n\nNode.js ${process.version}\n`);
	process.exit(1);
};
// Registered before the code's own handlers: these run first.
process.on('beforeExit', () => tell(process.exitCode));
process.on('exit', tell);
process.on('uncaughtException', (error) => {
	if (process.listenerCount('uncaughtException') === 1)
		uncaught(error);
});
await import(pathToFileURL(process.cwd() + '/main.mts').href).catch(uncaught);
