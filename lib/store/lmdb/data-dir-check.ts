/**
 * Checks an LMDB data directory before lmdb-js opens it. lmdb-js 3.5.6 crashes the process when
 * mdb_env_open fails (SIGSEGV in EnvWrap::closeEnv, freeing state it never set up), as it does for
 * a data.mdb that is not an LMDB file or is of another format version, or a data.mdb or lock.mdb
 * that is a directory: `rowgate serve --data DIR` over such a directory died without a word. What
 * can be told beforehand is refused here with RG_ERR_BAD_CONFIG naming the file (the CLI exits 2).
 *
 * A new environment on a full disk crashed too: LMDB sizes a new lock.mdb with ftruncate and
 * writes it through a shared map, and the first touch of a page the disk has no room for is
 * SIGBUS (serve seeding a new directory, or create-table, on a full 4 MB tmpfs: exit 135). A new
 * lock.mdb is written here instead, so that no room is an ENOSPC, and a new environment needs
 * NEW_ENVIRONMENT_BYTES free: both RG_ERR_STORE_FULL.
 */
import { accessSync, closeSync, constants, openSync, readSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
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
/** The lock.mdb LMDB makes for lmdb-js's 126 readers (sizeof MDB_txninfo + 125 x 64-byte MDB_reader, as measured). */
const LOCK_FILE_BYTES = 8272;
/**
 * Free room a new environment asks for: LMDB writes its two meta pages (8 KiB) when it opens one,
 * and a failed write there is an mdb_env_open failure (the crash above); the first transactions'
 * pages fail as any full-disk write does (RG_ERR_STORE_FULL).
 */
const NEW_ENVIRONMENT_BYTES = 64 * 1024;

export function checkDataDirectory(path: string): void {
  const refuse = (why: string): never => refused(path, 'RG_ERR_BAD_CONFIG', why);
  try {
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (e) {
    refuse(`it is not readable and writable by this process (${(e as NodeJS.ErrnoException).code})`);
  }
  /** data.mdb's size; 0 when it is missing (LMDB sets up an empty one as a new one too). */
  let dataBytes = 0;
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
    if (name === 'data.mdb') dataBytes = stat.size;
  }
  if (dataBytes > 0) checkMetaPage(join(path, 'data.mdb'), refuse);
  else {
    const { bavail, bsize } = statfsSync(path);
    const free = bavail * bsize;
    if (free < NEW_ENVIRONMENT_BYTES)
      refused(path, 'RG_ERR_STORE_FULL', `a new data directory needs ${NEW_ENVIRONMENT_BYTES} bytes free on its device, and ${free} are`);
  }
  writeNewLockFile(path);
}

function refused(path: string, code: 'RG_ERR_BAD_CONFIG' | 'RG_ERR_STORE_FULL', why: string): never {
  throw rgError(code, `the data directory ${path} cannot be opened: ${why}`);
}

/** Writes a missing lock.mdb as LMDB would size it, its bytes really allocated (LMDB takes it as it finds it). */
function writeNewLockFile(path: string): void {
  const file = join(path, 'lock.mdb');
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return; // there already, or another process made it meanwhile
    throw e;
  }
  try {
    writeSync(fd, Buffer.alloc(LOCK_FILE_BYTES));
  } catch (e) {
    rmSync(file, { force: true });
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') refused(path, 'RG_ERR_STORE_FULL', `no room on its device for lock.mdb (${code})`);
    throw e;
  } finally {
    closeSync(fd);
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
