/**
 * apache-arrow's runtime, from the one-file build the package ships beside its module entry
 * (`apache-arrow/Arrow.esnext.min`, the same sources bundled): the module entry is ~300 files,
 * which took 66-73 ms to resolve and load against 12-13 ms for the bundle, and every thread that
 * encodes Arrow or Parquet loads it (the calling thread and each scan thread). A 1,000,000-row
 * Parquet export went from 1.62-1.78 s to 1.49-1.52 s, `rowgate ls` from 0.19 s to 0.15 s,
 * the same output bytes (three alternated runs each).
 *
 * Everything rowgate runs of apache-arrow goes through `arrow` here; types still come from the
 * package (`import type`), which describes this build too. The bundle is the browser build: it has
 * no node streams (`toNodeStream` throws), so nothing here uses them. Objects of this copy are not
 * `instanceof` the module entry's classes: code that hands rowgate's batches to apache-arrow's
 * functions takes those functions from here (tests read the IPC bytes with either).
 * test/rows/arrow-door.test.ts fails when an upgrade drops the bundle or makes it write other
 * bytes than the module entry; apache-arrow is pinned to an exact version in package.json.
 */
import { createRequire } from 'node:module';
import type * as Arrow from 'apache-arrow';

export const arrow = createRequire(import.meta.url)('apache-arrow/Arrow.esnext.min') as typeof Arrow;
