/**
 * Reads a table's LMDB entries directly and checks every row's stored form (compact-row.ts): one
 * compact entry and nothing else, or a spilled marker followed by at least one cell entry; cell
 * entries without a row entry (legacy rows) only where `legacyAllowed`.
 */
import { open } from 'lmdb';
import { rowKeyEnd } from '../../lib/store/lmdb/cell-key.js';
import { FORMAT_VERSION, TAG_COMPACT, TAG_SPILLED } from '../../lib/store/lmdb/compact-row.js';
import { lmdbEnvOptions } from '../../lib/store/lmdb/env-options.js';

export interface RowForms {
  readonly rows: number;
  readonly compact: number;
  readonly spilled: number;
  readonly legacy: number;
  /** Compact rows in a format before the current one (format 1 held the revision 3 response). */
  readonly earlierFormat: number;
  /** Rows stored in no valid form, described. */
  readonly problems: string[];
}

/** The forms of the rows of database `dbName` (`data/<instance>/<table>`) in the data directory `dir`. */
export async function rowForms(dir: string, dbName: string, legacyAllowed = false): Promise<RowForms> {
  const env = open(lmdbEnvOptions(dir));
  const db = env.openDB<Buffer, Buffer>({ name: dbName, keyEncoding: 'binary', encoding: 'binary' });
  const problems: string[] = [];
  const counts = { rows: 0, compact: 0, spilled: 0, legacy: 0, earlierFormat: 0 };
  try {
    let row: Buffer | undefined;
    let form: 'compact' | 'spilled' | 'none' = 'none';
    let cells = 0;
    const endRow = (): void => {
      if (row === undefined) return;
      counts.rows++;
      const name = `row ${row.toString('hex')}`;
      if (form === 'compact') {
        counts.compact++;
        if (cells > 0) problems.push(`${name}: a compact entry and ${cells} cell entries`);
      } else if (form === 'spilled') {
        counts.spilled++;
        if (cells === 0) problems.push(`${name}: a spilled marker without cells`);
      } else {
        counts.legacy++;
        if (!legacyAllowed) problems.push(`${name}: ${cells} cell entries without a row entry`);
      }
    };
    for (const { key, value } of db.getRange({})) {
      const end = rowKeyEnd(key);
      const prefix = key.subarray(0, end);
      if (row === undefined || !row.equals(prefix)) {
        endRow();
        row = Buffer.from(prefix);
        cells = 0;
        form = 'none';
      }
      if (end === key.length) {
        if (value[0] === TAG_COMPACT) {
          form = 'compact';
          if (value[1] !== FORMAT_VERSION) counts.earlierFormat++;
        } else if (value[0] === TAG_SPILLED) form = 'spilled';
        else problems.push(`row ${row.toString('hex')}: unknown row entry tag ${value[0]}`);
      } else {
        cells++;
      }
    }
    endRow();
  } finally {
    await env.close();
  }
  return { ...counts, problems };
}
