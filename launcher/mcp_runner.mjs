// SPDX-License-Identifier: LGPL-2.1-or-later
// launch mcp's prepared sandbox: Node with the SDKs imported and esbuild's service started,
// waiting for its call's code (built into launch as a string; tests/bench/mcp_bench runs it
// bare).
//
// Standard input is a socket to the server. "ready" goes back once everything is loaded; the
// end of the input is the server's "go": main.mts of the working folder is transformed then,
// as tsx does it (with tsx's esbuild, whose service is already up), into main.mjs beside it
// (made for the job's user by the server), and imported. Not through tsx's loader: its hooks
// run in a thread of their own, a round trip for each module and each import of it, which
// cost a loaded machine tens of milliseconds per call.
// When the event loop is empty or the code exits, "done CODE" goes back on the socket: the
// server answers then, without waiting for Node's own exit. stdout and stderr are pipes, which
// Node writes synchronously: they hold all by then.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pbkdf2 } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { inspect } from 'node:util';

// tsx's own esbuild, wherever npm put it.
const esbuild = createRequire(
	fileURLToPath(new URL('./node_modules/tsx/package.json', import.meta.url)))('esbuild');
// tsx's options for an ES module; the source map makes stack traces name main.mts's lines.
const TRANSFORM = { loader: 'ts', format: 'esm', target: `node${process.versions.node}`,
		    sourcemap: 'inline', sourcesContent: false, minifyWhitespace: true,
		    keepNames: true };
// A client of each SDK, made and dropped: the first one sets up the SDK's own state.
const CLIENTS = {
	stripe: (Client) => new Client('sk_test_launch_warm_up'),
	openai: (Client) => new Client({ apiKey: 'launch-warm-up' }),
	'@anthropic-ai/sdk': (Client) => new Client({ apiKey: 'launch-warm-up' }),
};

process.setSourceMapsEnabled(true);
for (const name of (process.env.LAUNCH_MCP_PRELOAD ?? '').split(',').filter(Boolean)) {
	const sdk = await import(name);
	try {
		CLIENTS[name]?.(sdk.default);
	} catch {}
}
delete process.env.LAUNCH_MCP_PRELOAD;
// What a process's first request pays for once, paid here instead of in the call: esbuild's
// service, libuv's threads, the CA store, the address regular expressions that every request
// tests its host name with (compiled at their first use: 15 ms on a loaded machine), glibc's
// name service set-up (a name in /etc/hosts: no DNS, and one address, which glibc does not
// sort by connecting UDP sockets). Its nscd attempts are refused; the server leaves them out
// of the call's result.
await esbuild.transform('const warm: number = 1;\nexport default warm;\n', TRANSFORM);
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
// Node would (its stack, source-mapped to main.mts), and the process exits 1, as Node's would.
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
const main = `${process.cwd()}/main.mts`;
let js;
try {
	js = (await esbuild.transform(readFileSync(main, 'utf8'), { ...TRANSFORM, sourcefile: main }))
		.code;
} catch (e) {
	// What tsx would say: the file, line and column of each error.
	process.stderr.write(`${e.message}\n`);
	process.exitCode = 1;
}
if (js !== undefined) {
	try {
		writeFileSync(`${process.cwd()}/main.mjs`, js);
	} catch {
		js = undefined; // no main.mjs of ours: tsx's loader, as a cold call
		(await import('tsx/esm/api')).register();
	}
	await import(pathToFileURL(`${process.cwd()}/main.${js === undefined ? 'mts' : 'mjs'}`).href)
		.catch(uncaught);
}
