// SPDX-License-Identifier: LGPL-2.1-or-later
// The end-to-end scripts' one way to reach launch mcp with the official MCP TypeScript SDK's
// client, over either transport, so that each check runs over both: stdio (the client starts
// the server) or Streamable HTTP (this starts the server with --http 127.0.0.1:0 and a fresh
// token file, reads the port from its start line, and connects with the bearer token).
// MCP_TRANSPORT=http chooses HTTP; anything else, stdio.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const transportName = process.env.MCP_TRANSPORT === 'http' ? 'http' : 'stdio';

// HTTP servers still running: a script that exits early must not leave one listening (a stdio
// server ends by itself at the end of its input).
const servers = new Set();
process.on('exit', () => {
	for (const child of servers)
		child.kill('SIGTERM');
});

// Records the protocol revision the initialize result names, for either transport (the SDK
// keeps it only in the HTTP transport).
function recordVersion(transport, box) {
	let handler;

	Object.defineProperty(transport, 'onmessage', {
		configurable: true,
		get: () => handler,
		set: (fn) => {
			handler = fn && ((msg, extra) => {
				if (box.version === undefined && msg?.result?.protocolVersion)
					box.version = msg.result.protocolVersion;
				return fn(msg, extra);
			});
		},
	});
}

// The server's stderr goes to a file, not a pipe: with a pipe, a call whose code leaves a
// process behind in its exit handler was answered only when that process ended (seen with
// e2e.mjs's "result before teardown"), while a file is what the suites and users give it.
function stderrFile(dir) {
	const path = join(dir, 'stderr');

	return { path, fd: openSync(path, 'w'), text: () => readFileSync(path, 'utf8') };
}

async function startHttp(launch, args, dir, err) {
	const tokenFile = join(dir, 'token');
	const token = randomBytes(32).toString('hex');

	writeFileSync(tokenFile, token, { mode: 0o600 });
	const child = spawn(launch, [...args, '--http', '127.0.0.1:0', '--token-file', tokenFile],
			    { stdio: ['ignore', err.fd, err.fd] });
	servers.add(child);
	let status = null;
	const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
		servers.delete(child);
		status = signal ? 128 : code;
		resolve(status);
	}));
	for (let i = 0; i < 1200; i++) {
		const m = /serving MCP over HTTP at (http:\/\/\S+)/.exec(err.text());
		if (m)
			return { child, exited, url: m[1], token };
		if (status !== null)
			break;
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
	child.kill('SIGKILL');
	throw new Error(`the server did not start (exit ${status}): ${err.text().slice(-400)}`);
}

// Starts (over HTTP) or has the SDK start (over stdio) `launch ARGS`, connects a client.
// Returns the client, its transport, the server's pid, what it wrote on stderr so far, the
// revision negotiated, and close(), which over HTTP also ends the server with SIGTERM and
// gives its exit status. The server's stderr is copied to ours at close unless quiet.
// transport: 'stdio' or 'http' (default: MCP_TRANSPORT's).
export async function connect(launch, args, { name = 'launch-e2e', quiet = false,
					     transport: kind = transportName } = {}) {
	const client = new Client({ name, version: '1.0.0' });
	const dir = mkdtempSync(join(tmpdir(), 'launch-mcp-client.'));
	const err = stderrFile(dir);
	const box = {};
	let transport, pid, server = null;

	if (kind === 'http') {
		server = await startHttp(launch, args, dir, err);
		transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: {
			headers: { Authorization: `Bearer ${server.token}` } } });
		pid = server.child.pid;
	} else {
		transport = new StdioClientTransport({ command: launch, args, env: { ...process.env },
						       stderr: err.fd });
	}
	recordVersion(transport, box);
	await client.connect(transport);
	pid ??= transport.pid;
	return {
		client, transport, pid, url: server?.url,
		stderr: err.text,
		negotiated: () => box.version,
		async close() {
			let code = 0;

			// Over stdio, the end of its input ends the server; it is given the time a
			// loaded machine takes to tear its prepared sandboxes down (the SDK's
			// close() sends SIGTERM after 2 s and SIGKILL 2 s later, which can leave
			// the server's folder behind).
			const child = transport._process;
			if (child && child.exitCode === null && child.signalCode === null) {
				const ended = new Promise((resolve) => child.once('close',
					(status, signal) => resolve(signal ? 128 : status)));
				child.stdin.end();
				const timer = setTimeout(() => child.kill('SIGTERM'), 30000);
				code = await ended;
				clearTimeout(timer);
				transport._process = undefined;
			}
			await client.close();
			if (server) {
				server.child.kill('SIGTERM');
				const timer = setTimeout(() => server.child.kill('SIGKILL'), 10000);
				code = await server.exited;
				clearTimeout(timer);
			}
			if (!quiet)
				process.stderr.write(err.text());
			closeSync(err.fd);
			rmSync(dir, { recursive: true, force: true });
			return code;
		},
	};
}
