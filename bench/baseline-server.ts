/**
 * The baselines' minimal node:http server, run in its own process: nothing but what each
 * scenario's gateway request must at least cost.
 *
 *   GET  /stream?bytes=N   N pre-serialized bytes in 64 KiB chunks, with backpressure
 *   GET  /json?bytes=N     a JSON object of N bytes (point-read baseline)
 *   POST /json?bytes=N     reads and parses the body, answers a JSON object of N bytes (write baseline)
 *
 * Prints `listening PORT` once it accepts connections.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const LINE = Buffer.from(
  '{"entityId":[123456],"cells":{"d":{"a":[{"timestamp":1700000123456,"value":"user-123456","writer_schema":0}],"b":[{"timestamp":1700000123456,"value":977673664,"writer_schema":3}]}}}\r\n',
);
const STREAM = Buffer.alloc(8 * 1024 * 1024);
for (let i = 0; i < STREAM.length; i += LINE.length) LINE.copy(STREAM, i);
const CHUNK = 64 * 1024;

const jsonCache = new Map<number, Buffer>();
function jsonOfSize(n: number): Buffer {
  let b = jsonCache.get(n);
  if (!b) {
    const pad = Math.max(0, n - '{"x":""}'.length);
    b = Buffer.from(JSON.stringify({ x: 'y'.repeat(pad) }));
    jsonCache.set(n, b);
  }
  return b;
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const bytes = Number(url.searchParams.get('bytes') ?? '17');
  if (url.pathname === '/stream') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes) });
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes) {
        const off = sent % (STREAM.length - CHUNK);
        const n = Math.min(CHUNK, bytes - sent);
        sent += n;
        if (!res.write(STREAM.subarray(off, off + n))) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
    return;
  }
  if (url.pathname === '/json' && req.method === 'GET') {
    const body = jsonOfSize(bytes);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.end(body);
    return;
  }
  if (url.pathname === '/json' && req.method === 'POST') {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(parts).toString('utf8'));
      const body = jsonOfSize(bytes);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.end(body);
    });
    return;
  }
  res.writeHead(404);
  res.end();
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
