import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { storeConformance } from './conformance.js';

const dirs: string[] = [];
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

storeConformance(t, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-lmdb-'));
  dirs.push(dir);
  return new LmdbStore({ path: dir });
});

t.test('regression: a data directory whose name has an extension (./rowgate.db) opens as a directory', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'rowgate-lmdb-')), 'rowgate.db');
  dirs.push(dir);
  const store = new LmdbStore({ path: dir });
  await store.createInstance('x');
  t.same(await store.listInstances(), ['x']);
  await store.close();
});
