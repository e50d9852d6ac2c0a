/**
 * Checks an LMDB data directory before lmdb-js opens it. lmdb-js 3.5.6 crashes the process when
 * mdb_env_open fails (SIGSEGV in EnvWrap::closeEnv, freeing state it never set up), as it does for
 * a data.mdb that is not an LMDB file or is of another format version, or a data.mdb or lock.mdb
 * that is a directory: `rowgate serve --data DIR` over such a directory died without a word. What
 * can be told beforehand is refused here with RG_ERR_BAD_CONFIG naming the file (the CLI exits 2).
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rgError } from '../../errors.js';

/** The first meta page's header and the start of its MDB_meta (mdb.c: a 24-byte page header, then mm_magic, mm_version). */
const META_HEAD_BYTES = 32;
const FLAGS_AT = 18;
const P_META = 0x08;
const MAGIC_AT = 24;
const MDB_MAGIC = 0xbeefc0de;
const VERSION_AT = 28;
/** MDB_DATA_VERSION of the LMDB inside lmdb-js. */
const MDB_DATA_VERSION = 2;

export function checkDataDirectory(path: string): void {
  const refuse = (why: string): never => {
    throw rgError('RG_ERR_BAD_CONFIG', `the data directory ${path} cannot be opened: ${why}`);
  };
  try {
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (e) {
    refuse(`it is not readable and writable by this process (${(e as NodeJS.ErrnoException).code})`);
  }
  for (const name of ['data.mdb', 'lock.mdb']) {
    const file = join(path, name);
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (!stat.isFile()) refuse(`${name} is not a regular file`);
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (e) {
      refuse(`${name} is not readable and writable by this process (${(e as NodeJS.ErrnoException).code})`);
    }
    // An empty data.mdb is set up as a new one, as a missing one is.
    if (name === 'data.mdb' && stat.size > 0) checkMetaPage(file, refuse);
  }
}

function checkMetaPage(file: string, refuse: (why: string) => never): void {
  const head = Buffer.alloc(META_HEAD_BYTES);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, head, 0, META_HEAD_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  if (read < META_HEAD_BYTES || (head.readUInt16LE(FLAGS_AT) & P_META) === 0 || head.readUInt32LE(MAGIC_AT) !== MDB_MAGIC) {
    refuse('data.mdb is not an LMDB data file (it does not start with an LMDB meta page)');
  }
  const version = head.readUInt32LE(VERSION_AT) & 0xffff;
  if (version !== MDB_DATA_VERSION) refuse(`data.mdb is of LMDB data format ${version}; this build reads format ${MDB_DATA_VERSION}`);
}
