/** Shared by the export command tests: a gateway over a store the CLI can also read locally. */
import { join } from 'node:path';
import { parseLayout } from '../../lib/model/layout.js';
import { encodeRowKey } from '../../lib/model/row-key.js';
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
        { kind: 'value', family: 'strings', qualifier: `q${i % 3}`, timestamp: 1000 + i, schemaId: 0, json: JSON.stringify(`row ${i} \r\n ${'x'.repeat(i % 200)}`) },
        { kind: 'value', family: 'longs', qualifier: 'n', timestamp: 7, schemaId: 3, json: String(i) },
      ],
    });
  }
  await h.store.write('default', 'sample_table', rows);
  return h;
}
