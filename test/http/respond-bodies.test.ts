/**
 * sendJson (lib/http/respond.ts) sends a small Buffer body as Latin-1 text, in one write with the
 * head, and a larger one as the Buffer: either way the client must get the body's bytes exactly,
 * whatever they are (UTF-8 of any script, bytes that are not UTF-8), with a matching
 * Content-Length. Every size around the switch, over a real socket.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { sendJson } from '../../lib/http/respond.js';

const SIZES = [0, 1, 255, 256, 4095, 4096, 4097, 8192, 100_000];

/** `size` bytes cycling through every byte value, with UTF-8 text of several scripts in front. */
function bodyOf(size: number): Buffer {
  const text = Buffer.from('{"v":"é€😀中\u0000"}', 'utf8');
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = i < text.length ? text[i]! : (i * 7) & 0xff;
  return b;
}

function get(server: Server, size: number): Promise<{ status: number; length: string | undefined; body: Buffer }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/${size}` }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a Buffer body of any size and any bytes arrives byte for byte', async (t) => {
  const server = createServer((req, res) => sendJson({ config: { compression: false } }, req, res, 200, bodyOf(Number(req.url!.slice(1)))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  for (const size of SIZES) {
    const got = await get(server, size);
    t.equal(got.status, 200, `${size} bytes: status`);
    t.equal(got.length, String(size), `${size} bytes: Content-Length`);
    t.ok(got.body.equals(bodyOf(size)), `${size} bytes: the same bytes`);
  }
});
