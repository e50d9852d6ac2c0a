/**
 * GatewayResponse (lib/http/gateway-response.ts) sends X-Request-Id with whatever head a response
 * writes: writeHead with headers as an object, a flat array or nested pairs, with a status
 * message, with none, an implicit head (end or write without writeHead), and a head after
 * setHeader (node's slow path). Each case is a real request to a node:http server built with it.
 */
import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { GatewayResponse } from '../../lib/http/gateway-response.js';

type Answer = (res: ServerResponse) => void;

const answers: Record<string, Answer> = {
  object: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('a'),
  'flat array': (res) => res.writeHead(200, ['content-type', 'text/plain']).end('a'),
  'nested array': (res) => res.writeHead(200, [['content-type', 'text/plain']] as unknown as string[]).end('a'),
  'status message': (res) => res.writeHead(201, 'Made', { 'content-type': 'text/plain' }).end('a'),
  'no headers': (res) => res.writeHead(204).end(),
  'implicit by end': (res) => res.end('a'),
  'implicit by write': (res) => {
    res.write('a');
    res.end('b');
  },
  'after a refused head': (res) => {
    try {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-bad': 'a\nb' });
    } catch {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('refused');
    }
  },
  'after setHeader': (res) => {
    res.setHeader('allow', 'GET');
    res.writeHead(405, { 'content-type': 'text/plain' }).end('a');
  },
};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function get(port: number, path: string): Promise<{ status: number; headers: IncomingHttpHeaders; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body }));
    })
      .on('error', reject)
      .end();
  });
}

t.test('every kind of head carries the request id, once, and the head is otherwise what was asked', async (t) => {
  const server = createServer({ ServerResponse: GatewayResponse as unknown as typeof import('node:http').ServerResponse }, (req, res) => {
    (res as GatewayResponse).requestId = `id-${req.url!.slice(1)}`;
    answers[decodeURIComponent(req.url!.slice(1))]!(res);
  });
  const port = await listen(server);
  t.teardown(() => server.close());
  for (const [name] of Object.entries(answers)) {
    const path = `/${encodeURIComponent(name)}`;
    const r = await get(port, path);
    t.equal(r.headers['x-request-id'], `id-${encodeURIComponent(name)}`, `${name}: the id`);
    t.equal(r.rawHeaders.filter((h) => h.toLowerCase() === 'x-request-id').length, 1, `${name}: sent once`);
    if (name !== 'no headers' && !name.startsWith('implicit')) t.equal(r.headers['content-type'], 'text/plain', `${name}: its own headers kept`);
  }
  const message = await get(port, `/${encodeURIComponent('status message')}`);
  t.equal(message.status, 201, 'the status given with a message');
  const slow = await get(port, `/${encodeURIComponent('after setHeader')}`);
  t.equal(slow.headers.allow, 'GET', 'a header set before writeHead is kept');
  const both = await get(port, `/${encodeURIComponent('implicit by write')}`);
  t.equal(both.body, 'ab', 'an implicit head by write: the body whole');
});

t.test('a response without an id is written as node writes it', async (t) => {
  const server = createServer({ ServerResponse: GatewayResponse as unknown as typeof import('node:http').ServerResponse }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('a');
  });
  const port = await listen(server);
  t.teardown(() => server.close());
  const r = await get(port, '/');
  t.equal(r.headers['x-request-id'], undefined, 'no id header');
  t.equal(r.body, 'a');
});
