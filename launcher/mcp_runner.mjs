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
import { pbkdf2 } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { readSync, writeSync } from 'node:fs';
import { inspect } from 'node:util';

// A client of each SDK, made and dropped: the first one sets up the SDK's own state.
const CLIENTS = {
	stripe: (Client) => new Client('sk_test_launch_warm_up'),
	openai: (Client) => new Client({ apiKey: 'launch-warm-up' }),
	'@anthropic-ai/sdk': (Client) => new Client({ apiKey: 'launch-warm-up' }),
};

// Before the SDKs: imported through tsx's loader, as the code's imports of them will be (the
// same module, not a second copy).
register();
for (const name of (process.env.LAUNCH_MCP_PRELOAD ?? '').split(',').filter(Boolean)) {
	const sdk = await import(name);
	try {
		CLIENTS[name]?.(sdk.default);
	} catch {}
}
delete process.env.LAUNCH_MCP_PRELOAD;
// What a process's first request pays for once, paid here instead of in the call: esbuild's
// service (a warm-up file through tsx), libuv's threads, the CA store, the address regular
// expressions that every request tests its host name with (compiled at their first use:
// 15 ms on a loaded machine), glibc's name service set-up (a name in /etc/hosts: no DNS, and
// one address, which glibc does not sort by connecting UDP sockets). Its nscd attempts are
// refused; the server leaves them out of the call's result.
await import(new URL('./warmup.mts', import.meta.url).href);
await new Promise((done) => pbkdf2('', '', 1, 8, 'sha256', done));
createSecureContext();
isIP('api.example');
await lookup('localhost', { family: 4 }).catch(() => {});
writeSync(0, 'ready\n');
const buf = Buffer.alloc(64);
while (readSync(0, buf) > 0);
let told = false;
const tell = (code) => {
	if (told)
		return;
	told = true;
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
