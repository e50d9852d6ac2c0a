/**
 * The one door through which code outside lib/store packs rows for a store's writePacked
 * (`rowgate import`'s parsing threads): a packer for the store's packing (Store.packing), which
 * the caller fills with import lines or validated rows and hands over as PackedRows. What a
 * packed row looks like is the store's own business (the LMDB store: prepared-batch.ts, with
 * plain-line.ts packing lines of the common shape straight from their bytes).
 */
import type { RowWrite, SchemaTable, TableLayout } from '../model/types.js';
import { PlainLineEncoder } from './lmdb/plain-line.js';
import { BatchPacker } from './lmdb/prepared-batch.js';
import type { PackedRows, StorePacking } from './store.js';

export interface RowPacker {
  /** Empties the packer (whatever a batch that stopped left in it). */
  clear(): void;
  /**
   * Packs the import line `b[start, end)` straight from its bytes when it is of a shape the
   * packer can be sure of; its cells, or 0 (nothing packed) when the caller must parse and
   * validate it and hand it to add(). Cells without a timestamp get `now`.
   */
  addLine(b: Buffer, start: number, end: number, now: number): number;
  /** Packs a validated row; false (nothing packed) when the packed form cannot carry it (write it as an object). */
  add(row: RowWrite): boolean;
  /** The rows packed since clear(), handed over; the packer is empty again. */
  finish(): PackedRows;
}

export function rowPacker(packing: StorePacking, layout: TableLayout, schemas: SchemaTable, maxRowKeyBytes: number, expectedBytes: number): RowPacker {
  switch (packing) {
    case 'lmdb': {
      const packer = new BatchPacker(layout, maxRowKeyBytes, expectedBytes);
      const lines = new PlainLineEncoder(layout, schemas, maxRowKeyBytes);
      return {
        clear: () => packer.clear(),
        addLine: (b, start, end, now) => lines.add(b, start, end, now, packer),
        add: (row) => packer.add(row),
        finish: () => packer.finish(),
      };
    }
  }
}
