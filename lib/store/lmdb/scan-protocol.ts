/** Messages between the scan pool (main thread) and its scan workers. */
import type { ReadSpec } from '../../model/types.js';
import type { ChunkSpec } from '../store.js';

/** The encoders a scan thread loads at its first part that needs one (Arrow record batches, Avro blocks). */
export type ScanEncoder = 'arrow' | 'avro';

/** A thread started early (scan-pool.ts startScanThreadEarly): the encoder its scan will need, loaded while it waits. */
export interface EarlyThreadData {
  readonly encoder?: ScanEncoder;
}

/** A worker's first message from the pool that takes it: the data directory whose LMDB environment its parts read. */
export interface OpenEnvironment {
  readonly open: string;
}

/** Render one part of a scan: the cells of [start, end) of one table. */
export interface PartJob {
  readonly job: number;
  readonly dbName: string;
  /** The table's layout description as JSON, built once per scan (parsed and cached by the worker). */
  readonly layoutJson: string;
  readonly read: ReadSpec;
  /** Row documents (ChunkRenderer), Avro blocks (AvroChunkEncoder) or Arrow record batches (ArrowChunkEncoder). */
  readonly render: ChunkSpec;
  /** The scan's clock for TTL checks: one instant for every part. */
  readonly now: number;
  readonly start?: Uint8Array;
  readonly end?: Uint8Array;
  readonly chunkBytes: number;
  /** One Int32 set to 1 when the scan is abandoned: the worker stops between chunks. */
  readonly cancel: SharedArrayBuffer;
}

/** A rendered chunk of a part, the end of a part, or its failure. */
export type PartMessage =
  /** `bytes[0, length)`: the rendered rows (the rest of the buffer is unused room). */
  | { readonly job: number; readonly bytes: ArrayBuffer; readonly length: number; readonly rows: number; readonly cells: number }
  | { readonly job: number; readonly done: true }
  | { readonly job: number; readonly error: string };

/** A chunk's buffer given back by the main thread once its bytes were sent, for the worker's next chunks. */
export interface SpareBuffer {
  readonly spare: ArrayBuffer;
}
