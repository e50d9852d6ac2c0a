/** Shared by the export command tests: a gateway over a store the CLI can also read locally. */
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { SAMPLE_LAYOUT, startGateway, type Harness } from '../http/harness.js';

export const ROWS = 3000;

/** A gateway over a store in `dir` (so the CLI can export the same data locally), holding ROWS rows. */
export async function filledGateway(t: { teardown(fn: () => unknown): void }, dir: string, file: Record<string, unknown> = {}): Promise<Harness> {
  const h = await startGateway({ ...file }, { store: new LmdbStore({ path: join(dir, 'data'), noSync: true }) });
  t.teardown(() => h.close());
  const format = parseLayout(SAMPLE_LAYOUT).keyFormat;
  const rows: RowWrite[] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push({
      rowKey: encodeRowKey(format, [BigInt(i) * 1_000_003n]),
      cells: [
        {
          kind: 'value',
          family: 'strings',
          qualifier: `q${i % 3}`,
          timestamp: 1000 + i,
          schemaId: 0,
          json: JSON.stringify(`row ${i} \r\n ${'x'.repeat(i % 200)}`),
        },
        { kind: 'value', family: 'longs', qualifier: 'n', timestamp: 7, schemaId: 3, json: String(i) },
      ],
    });
  }
  await h.store.write('default', 'sample_table', rows);
  return h;
}

/**
 * A TCP proxy on 127.0.0.1 to `target`: requests pass unchanged; `relay`, called once a
 * connection with its two sockets, passes the upstream's data on to the client. Closed on teardown.
 */
export async function tcpProxy(t: { teardown(fn: () => unknown): void }, target: string, relay: (client: Socket, upstream: Socket) => void): Promise<string> {
  const port = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    relay(client, upstream);
    upstream.on('end', () => client.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A proxy to `target` passing at most `bytesPerTick` (16 KiB) of response every 10 ms: an export through it takes a while. */
export function slowProxy(t: { teardown(fn: () => unknown): void }, target: string, bytesPerTick = 16384): Promise<string> {
  return tcpProxy(t, target, (client, upstream) => {
    upstream.on('data', (data: Buffer) => {
      upstream.pause();
      void (async () => {
        for (let i = 0; i < data.length && !client.destroyed; i += bytesPerTick) {
          client.write(data.subarray(i, i + bytesPerTick));
          await sleep(10);
        }
        upstream.resume();
      })();
    });
  });
}
