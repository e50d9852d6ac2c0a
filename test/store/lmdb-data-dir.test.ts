// A data directory lmdb-js cannot open is refused before it tries (lmdb-js 3.5.6 crashed the
// process with SIGSEGV on every one of these): RG_ERR_BAD_CONFIG naming the file and the reason.
import t, { type Test } from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { tempDir } from '../cli/helpers.js';

const freshDir = (t: Test): string => tempDir(t, 'rowgate-datadir-');

/** The first 64 bytes of the data.mdb of a store written and closed here. */
async function realHead(t: Test): Promise<Buffer> {
  const dir = freshDir(t);
  const store = new LmdbStore({ path: dir, scanThreads: 0, noSync: true });
  await store.createInstance('i');
  await store.close();
  return readFileSync(join(dir, 'data.mdb')).subarray(0, 64);
}

const cases: { name: string; setUp: (dir: string, head: Buffer) => void; message: RegExp }[] = [
  { name: 'data.mdb is a directory', setUp: (dir) => mkdirSync(join(dir, 'data.mdb')), message: /data\.mdb is not a regular file/ },
  { name: 'lock.mdb is a directory', setUp: (dir) => mkdirSync(join(dir, 'lock.mdb')), message: /lock\.mdb is not a regular file/ },
  {
    name: 'data.mdb holds something else (text)',
    setUp: (dir) => writeFileSync(join(dir, 'data.mdb'), 'hello\n'.repeat(2000)),
    message: /data\.mdb is not an LMDB data file/,
  },
  {
    name: 'data.mdb is shorter than a meta page header',
    setUp: (dir, head) => writeFileSync(join(dir, 'data.mdb'), head.subarray(0, 20)),
    message: /not an LMDB data file/,
  },
  {
    name: 'data.mdb has the meta page flag but not the magic',
    setUp: (dir, head) => writeFileSync(join(dir, 'data.mdb'), Buffer.concat([head.subarray(0, 24), Buffer.alloc(8192)])),
    message: /not an LMDB data file/,
  },
  {
    name: 'data.mdb is of another LMDB data format',
    setUp: (dir, head) => {
      const other = Buffer.concat([head, Buffer.alloc(8192)]);
      other.writeUInt32LE(1, 28);
      writeFileSync(join(dir, 'data.mdb'), other);
    },
    message: /data\.mdb is of LMDB data format 1; this build reads format 2/,
  },
];

t.test('a data directory lmdb-js would crash on is refused with RG_ERR_BAD_CONFIG naming the file', async (t) => {
  const head = await realHead(t);
  t.equal(head.readUInt32LE(24), 0xbeefc0de, 'the checked layout is that of a real data.mdb: magic at 24');
  t.equal(head.readUInt32LE(28) & 0xffff, 2, 'format version 2 at 28');
  for (const c of cases) {
    const dir = freshDir(t);
    c.setUp(dir, head);
    t.throws(() => new LmdbStore({ path: dir, scanThreads: 0 }), { code: 'RG_ERR_BAD_CONFIG', message: c.message }, c.name);
  }
});

t.test('an empty directory, or empty data.mdb and lock.mdb, open as a new store', async (t) => {
  for (const files of [[], ['data.mdb', 'lock.mdb']]) {
    const dir = freshDir(t);
    for (const f of files) writeFileSync(join(dir, f), '');
    const store = new LmdbStore({ path: dir, scanThreads: 0, noSync: true });
    await store.createInstance('i');
    t.same(await store.listInstances(), ['i'], `${files.join(' and ') || 'nothing'} in the directory`);
    await store.close();
  }
});
