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
import { pathToFileURL } from 'node:url';
import { generateKeyPairSync, pbkdf2, sign } from 'node:crypto';
import https from 'node:https';
import tls, { createSecureContext } from 'node:tls';
import { Duplex } from 'node:stream';
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { readSync, writeSync } from 'node:fs';
import { inspect } from 'node:util';

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
delete process.env.LAUNCH_MCP_PRELOAD;
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
const buf = Buffer.alloc(64);
while (readSync(0, buf) > 0);
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
