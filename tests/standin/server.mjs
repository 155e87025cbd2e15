// SPDX-License-Identifier: LGPL-2.1-or-later
// A local HTTPS stand-in for the providers' APIs (Stripe, OpenAI, Anthropic), for the demo
// and the tests: enough of each API for the official SDKs' calls, chosen by the Host header.
//
// usage: node server.mjs CERT KEY ADDR PORT READY_FILE
// Prints one line per request ("standin 127.0.0.2: POST api.stripe.com /v1/customers");
// writes READY_FILE once it listens. With STANDIN_AUTH_LOG=FILE, appends each request's
// credential headers there ("POST api.stripe.com /v1/customers authorization=Bearer sk_..."):
// what the gateway's tests check arrived.
//
// Paths under /gw/ on any host serve the gateway's tests and bench, with keep-alive:
// /gw/echo (the credential headers and body length, as JSON), /gw/sse?n=N&ms=MS (N events of
// text/event-stream, MS apart), /gw/large?bytes=N (N bytes), /gw/ws (an upgrade, then an echo).
// A completion asked for with "stream": true (OpenAI's chat completions, Anthropic's messages)
// is answered as the provider does, in server-sent events, one word of the reply each
// STANDIN_STREAM_MS (200 by default) apart: the tests check that they reach the SDK as spread.
import { createServer } from 'node:https';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

const [cert, key, addr, port, ready] = process.argv.slice(2);
let nextId = 1;
const customers = [
	{ id: 'cus_demo1', object: 'customer', email: 'ada@example.com', name: 'Ada' },
	{ id: 'cus_demo2', object: 'customer', email: 'grace@example.com', name: 'Grace' },
];

function stripe(req, body) {
	const url = new URL(req.url, 'https://api.stripe.com');
	if (req.method === 'GET' && url.pathname === '/v1/customers') {
		const limit = Number(url.searchParams.get('limit') ?? 10);
		return [200, { object: 'list', url: '/v1/customers', has_more: false,
			       data: customers.slice(0, limit) }];
	}
	if (req.method === 'POST' && url.pathname === '/v1/customers') {
		const form = new URLSearchParams(body);
		const customer = { id: `cus_new${nextId++}`, object: 'customer',
				   email: form.get('email'), name: form.get('name') };
		customers.push(customer);
		return [200, customer];
	}
	if (req.method === 'GET' && url.pathname === '/v1/webhook_endpoints')
		return [200, { object: 'list', url: '/v1/webhook_endpoints', has_more: false, data: [] }];
	if (req.method === 'GET' && url.pathname === '/v1/balance')
		return [200, { object: 'balance', livemode: false,
			       available: [{ amount: 4200, currency: 'usd' }], pending: [] }];
	return [404, { error: { type: 'invalid_request_error',
				message: `Unrecognized request URL (${req.method}: ${url.pathname})` } }];
}

function openai(req, body) {
	if (req.method === 'POST' && req.url.startsWith('/v1/chat/completions')) {
		const request = JSON.parse(body || '{}');
		return [200, { id: 'chatcmpl-standin', object: 'chat.completion', created: 0,
			       model: request.model, choices: [{ index: 0, finish_reason: 'stop',
			       message: { role: 'assistant', content: 'Hello from the stand-in.' } }],
			       usage: { prompt_tokens: 1, completion_tokens: 5, total_tokens: 6 } }];
	}
	return [404, { error: { type: 'invalid_request_error', message: 'unknown path' } }];
}

function anthropic(req, body) {
	if (req.method === 'POST' && req.url.startsWith('/v1/messages')) {
		const request = JSON.parse(body || '{}');
		return [200, { id: 'msg_standin', type: 'message', role: 'assistant',
			       model: request.model, stop_reason: 'end_turn', stop_sequence: null,
			       content: [{ type: 'text', text: 'Hello from the stand-in.' }],
			       usage: { input_tokens: 1, output_tokens: 5 } }];
	}
	return [404, { type: 'error', error: { type: 'not_found_error', message: 'unknown path' } }];
}

// What the demo's "attacker" collects: whatever reaches it is a way out the sandbox missed.
function attacker(req) {
	return [200, { collected: req.url }];
}

const REPLY_WORDS = ['Hello', ' from', ' the', ' stand-in.'];

// The events of a streamed completion: OpenAI's chunks then [DONE], or Anthropic's message
// events; each word's event STANDIN_STREAM_MS after the previous one.
function streamEvents(host, model) {
	if (host === 'api.openai.com') {
		const chunk = (delta, finish) => `data: ${JSON.stringify({ id: 'chatcmpl-standin',
			object: 'chat.completion.chunk', created: 0, model,
			choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
		return [chunk({ role: 'assistant', content: '' }, null),
			...REPLY_WORDS.map((w) => chunk({ content: w }, null)),
			chunk({}, 'stop') + 'data: [DONE]\n\n'];
	}
	const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
	return [ev('message_start', { message: { id: 'msg_standin', type: 'message',
			role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
			usage: { input_tokens: 1, output_tokens: 0 } } }) +
		ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
		...REPLY_WORDS.map((text) => ev('content_block_delta',
			{ index: 0, delta: { type: 'text_delta', text } })),
		ev('content_block_stop', { index: 0 }) +
		ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null },
				      usage: { output_tokens: 5 } }) + ev('message_stop', {})];
}

// Answers a streamed completion; false when the request is not one.
function streamed(host, req, res, body) {
	if (req.method !== 'POST' || !(host === 'api.openai.com' && req.url.startsWith('/v1/chat/completions')) &&
	    !(host === 'api.anthropic.com' && req.url.startsWith('/v1/messages')))
		return false;
	let request;
	try {
		request = JSON.parse(body || '{}');
	} catch {
		return false;
	}
	if (request.stream !== true)
		return false;
	const events = streamEvents(host, request.model), ms = Number(process.env.STANDIN_STREAM_MS ?? 200);
	res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache',
			     'request-id': 'req_standin', connection: 'close' });
	let i = 0;
	const tick = () => {
		res.write(events[i]);
		if (++i < events.length)
			setTimeout(tick, i === 1 || i === events.length - 1 ? 0 : ms);
		else
			res.end();
	};
	tick();
	return true;
}

const PROVIDERS = { 'api.stripe.com': stripe, 'api.openai.com': openai,
		    'api.anthropic.com': anthropic, 'attacker.example': attacker,
		    '127.0.0.3': attacker };

function gateway(req, res, body) {
	const url = new URL(req.url, 'https://standin');
	if (url.pathname === '/gw/echo') {
		const reply = JSON.stringify({ method: req.method, host: req.headers.host ?? null,
					       authorization: req.headers.authorization ?? null,
					       x_api_key: req.headers['x-api-key'] ?? null,
					       cookie: req.headers.cookie ?? null, body_len: body.length,
					       client_port: req.socket.remotePort });
		res.writeHead(200, { 'content-type': 'application/json' });
		return res.end(reply);
	}
	if (url.pathname === '/gw/sse') {
		const n = Number(url.searchParams.get('n') ?? 3), ms = Number(url.searchParams.get('ms') ?? 200);
		let i = 0;
		res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
		const tick = () => {
			res.write(`data: {"i":${i},"t":${Date.now()}}\n\n`);
			if (++i < n)
				setTimeout(tick, ms);
			else
				res.end();
		};
		return tick();
	}
	if (url.pathname === '/gw/large') {
		const bytes = Number(url.searchParams.get('bytes') ?? 1048576);
		res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
		return res.end(Buffer.alloc(bytes, 120));
	}
	res.writeHead(404, { 'content-type': 'application/json' });
	return res.end('{"error":"unknown /gw/ path"}');
}

const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
	let body = '';
	req.setEncoding('utf8');
	req.on('data', (chunk) => { body += chunk; });
	req.on('end', () => {
		const host = (req.headers.host ?? '').replace(/:\d+$/, '');
		if (process.env.STANDIN_AUTH_LOG)
			appendFileSync(process.env.STANDIN_AUTH_LOG,
				       `${req.method} ${host} ${req.url} authorization=${req.headers.authorization ?? ''}` +
				       ` x-api-key=${req.headers['x-api-key'] ?? ''}\n`);
		if (req.url.startsWith('/gw/'))
			return gateway(req, res, body);
		console.log(`standin ${addr}: ${req.method} ${host} ${req.url}`);
		if (streamed(host, req, res, body))
			return;
		const handler = PROVIDERS[host];
		const [status, reply] = handler ? handler(req, body)
			: [421, { error: { message: `not a stand-in host: ${host}` } }];
		// Connection: close, so that a client's process ends when its work is done rather than
		// when an idle keep-alive connection times out (seconds, which would swamp every
		// measurement of start-up made with this stand-in).
		res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_standin',
					connection: 'close' });
		res.end(JSON.stringify(reply));
	});
});
// A WebSocket's upgrade on /gw/ws: the 101, then every byte echoed (the gateway's tunnel test).
server.on('upgrade', (req, socket) => {
	if (!req.url.startsWith('/gw/ws'))
		return socket.destroy();
	socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
		     'Connection: Upgrade\r\n\r\n');
	socket.pipe(socket);
});
server.listen(Number(port), addr, () => writeFileSync(ready, `${addr}:${port}\n`));
