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
