/** How every thread of a process opens a data directory's LMDB environment (lmdb-js shares one environment per path and process). */
import type { RootDatabaseOptionsWithPath } from 'lmdb';

export function lmdbEnvOptions(path: string, noSync = false): RootDatabaseOptionsWithPath {
  // noSubdir false: lmdb-js would take a path with an extension (./rowgate.db) for a file.
  return { path, noSubdir: false, maxDbs: 10_000, compression: false, noSync };
}
