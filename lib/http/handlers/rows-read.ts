/**
 * GET rows: a point get (`eid`), a bulk get (`eids`), a wildcard scan (`eid` with `[]`), or a range
 * scan (`start_eid`/`end_eid`, revisions 1-2 `start_rk`/`end_rk`), streamed as CR LF framed rows.
 * HEAD is the same request without the body (node drops it); a scan is then not run at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Transform } from 'node:stream';
import { rgError } from '../../errors.js';
import { compileWildcard, resolveEntityId } from '../../model/keys/entity-id.js';
import { parseLimit, parseReadSpec } from '../../model/read/read-request.js';
import { WILDCARD, type ReadSpec, type RowOut, type TableLayout } from '../../model/types.js';
import type { ScanRequest } from '../../store/store.js';
import { tableLayout, type AppContext, type Handler, type Params, type RequestInfo } from '../context.js';
import type { Query } from '../query.js';
import { dialectOf } from '../../rows/dialect.js';
import { bulkKeys, storableKey } from '../../rows/request-keys.js';
import { asksForFreshening, FRESHENING_HEADER, FRESHENING_STORED } from '../freshening.js';
import { sendJson } from '../respond.js';
import { compressor, encodingHeaders, negotiateEncoding } from '../compression.js';
import { framedRows, rowRenderSpec } from '../../rows/row-format.js';
import type { ChunkSource } from '../../rows/chunk-source.js';
import { RowStream, scanSource, type StreamEnd } from '../../rows/row-stream.js';
import { scanTrailers } from '../scan-trailers.js';
import { CONTENT_TYPE, negotiateRowFormat, terminatorOf, type RowFormat } from '../../rows/row-formats.js';
import { AvroEncodeStage, LimitStage } from '../../rows/stages/avro.js';
import { ArrowEncodeStage, arrowStreamBody, type ArrowChunkBody } from '../../rows/stages/arrow.js';
import { wholeBody } from '../../rows/stages/whole-body.js';
import { filteredRows } from '../../rows/stages/pipeline.js';
import { dropWhenStalled } from '../stall.js';
import type { RenderedChunk } from '../../store/store.js';

export const getRows: Handler = (ctx, req, res, params, query, info) => {
  const layout = tableLayout(ctx, params);
  // Synchronous while the layout is at hand (LMDB): a point read then answers without a promise.
  if (layout instanceof Promise) return layout.then((l) => getRowsOf(ctx, req, res, params, query, info, l));
  return getRowsOf(ctx, req, res, params, query, info, layout);
};

function getRowsOf(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  query: Query,
  info: RequestInfo,
  layout: TableLayout,
): Promise<void> | void {
  const dialect = dialectOf(ctx.config.revision);
  const freshening = dialect.freshening && asksForFreshening(query);
  const read = parseReadSpec(layout, { cols: query.get('cols'), versions: query.get('versions'), timerange: query.get('timerange') });
  const limit = parseLimit(query.get('limit'));
  // -1 (everything) stays allowed: bulk export is what scans are for; maxLimit bounds explicit counts.
  if (limit > ctx.config.limits.maxLimit)
    throw rgError('RG_ERR_BAD_LIMIT', `limit ${limit} exceeds the configured maximum of ${ctx.config.limits.maxLimit} rows (use -1 for all rows)`);
  const format = negotiateRowFormat(req.headers.accept);

  // Set once the parameters every mode shares are checked (an error about those goes out without it).
  if (freshening) res.setHeader(FRESHENING_HEADER, FRESHENING_STORED);

  const eid = query.get('eid');
  const eids = query.get('eids');
  const start = query.get(dialect.startParam);
  const end = query.get(dialect.endParam);
  const modes = (eid !== undefined ? 1 : 0) + (eids !== undefined ? 1 : 0) + (start !== undefined || end !== undefined ? 1 : 0);
  if (modes > 1) {
    throw rgError('RG_ERR_AMBIGUOUS_REQUEST', `Ambiguous request: give only one of eid, eids, or ${dialect.startParam}/${dialect.endParam}`);
  }

  if (eid !== undefined) {
    const input = dialect.parseEid(eid, layout.keyFormat, true);
    if (input.kind === 'components' && input.components.includes(WILDCARD)) {
      const filter = compileWildcard(layout.keyFormat, input.components);
      return streamScan(ctx, req, res, params, layout, { filter, limit, read }, info, format);
    }
    const keys = limit === 0 ? [] : [storableKey(resolveEntityId(layout.keyFormat, input), ctx.store.maxRowKeyBytes, 'eid')];
    return sendRows(ctx, req, res, params, layout, keys, read, info, format);
  }
  if (eids !== undefined) {
    const keys = bulkKeys(eids, layout, dialect, ctx.config.limits.maxEids, ctx.store.maxRowKeyBytes);
    // Every id asked for comes back unless `limit` is given: the default of 100 is for scans, and
    // silently dropping requested rows would look like missing data (maxEids bounds the request).
    const wanted = limit < 0 || query.get('limit') === undefined ? keys : keys.slice(0, limit);
    return sendRows(ctx, req, res, params, layout, wanted, read, info, format);
  }
  const scan: ScanRequest = {
    start:
      start === undefined
        ? undefined
        : storableKey(dialect.parseBound(start, layout.keyFormat, dialect.startParam), ctx.store.maxRowKeyBytes, dialect.startParam),
    end: end === undefined ? undefined : storableKey(dialect.parseBound(end, layout.keyFormat, dialect.endParam), ctx.store.maxRowKeyBytes, dialect.endParam),
    limit,
    read,
  };
  return streamScan(ctx, req, res, params, layout, scan, info, format);
}

/**
 * The rows of `keys` (point or bulk get): json and ndjson rendered by the store where it can
 * (Store.getChunk), each row followed by its terminator; avro encoded from the rows' cells.
 */
function sendRows(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  layout: TableLayout,
  keys: readonly Buffer[],
  read: ReadSpec,
  info: RequestInfo,
  format: RowFormat,
): Promise<void> | void {
  if (format === 'avro' || format === 'arrow' || format === 'parquet') {
    const rows = keys.length === 0 ? Promise.resolve([]) : ctx.store.get(params.instance!, params.table!, keys, read);
    return rows.then(async (got: readonly RowOut[]) => {
      info.rows = got.length;
      sendJson(ctx, req, res, 200, await wholeBody(await cellEncoder(ctx, layout, format, read), got), { 'content-type': CONTENT_TYPE[format] });
    });
  }
  if (keys.length === 0) return sendBody(ctx, req, res, '', format);
  if (ctx.store.getChunk === undefined) {
    return ctx.store.get(params.instance!, params.table!, keys, read).then((rows: readonly RowOut[]) => {
      info.rows = rows.length;
      return sendBody(ctx, req, res, framedRows(rows, layout.keyFormat, ctx.config.revision, terminatorOf(format)), format);
    });
  }
  const chunk = ctx.store.getChunk(params.instance!, params.table!, keys, read, rowRenderSpec(ctx.config.revision, terminatorOf(format)));
  info.rows = chunk.rows;
  return sendBody(ctx, req, res, chunk.bytes, format);
}

/** The stage that encodes filtered rows' cells as Avro, Arrow or Parquet (no row document rendered), for gets and scans alike. */
async function cellEncoder(ctx: AppContext, layout: TableLayout, format: 'avro' | 'arrow' | 'parquet', read: ReadSpec): Promise<Transform> {
  // Loaded on first use, as parquet-arrow.ts is: a gateway that never sends Parquet does not load its writers.
  if (format === 'parquet') return new (await import('../../rows/stages/parquet.js')).ParquetEncodeStage(layout, read.maxVersions);
  return format === 'avro' ? new AvroEncodeStage(layout, dialectOf(ctx.config.revision).renderSpec.withSchema) : new ArrowEncodeStage(layout, read.maxVersions);
}

/** Rendered rows (json or ndjson) with the format's content type. */
function sendBody(ctx: AppContext, req: IncomingMessage, res: ServerResponse, body: string | Buffer, format: RowFormat): void {
  if (format === 'json') return sendJson(ctx, req, res, 200, body);
  sendJson(ctx, req, res, 200, body, { 'content-type': CONTENT_TYPE[format] });
}

/**
 * A scan's chunks as the response body: the first chunk is read before the headers go out, so a
 * scan that fails at once is a proper error response (its slot released, the source closed);
 * later failures truncate the stream.
 */
async function chunkBody(
  source: ChunkSource,
  releaseSlot: () => void,
  onRows: (n: number) => void,
  options: StreamEnd,
): Promise<{ readonly streams: NodeJS.ReadableStream[]; readonly rowsSent: () => number }> {
  let first: RenderedChunk | undefined;
  try {
    first = await source.next();
  } catch (e) {
    releaseSlot();
    await source.close();
    throw e;
  }
  const stream = new RowStream(source, first, onRows, options);
  return { streams: [stream], rowsSent: () => stream.rowsSent };
}

/** How a store's Arrow chunks become the body of an Arrow or Parquet scan; undefined for another format. */
async function columnarBody(format: RowFormat, layout: TableLayout, versions: number): Promise<ArrowChunkBody | undefined> {
  if (format === 'arrow') return arrowStreamBody(layout, versions);
  if (format !== 'parquet') return undefined;
  // Loaded on first use: a gateway that never sends Parquet does not compile parquet-wasm.
  return (await import('../../rows/stages/parquet-arrow.js')).parquetFromArrowChunks(layout, versions);
}

async function streamScan(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  layout: TableLayout,
  request: ScanRequest,
  info: RequestInfo,
  format: RowFormat,
): Promise<void> {
  const encoding = negotiateEncoding(req, ctx.config.compression);
  const headers = { 'content-type': CONTENT_TYPE[format], ...encodingHeaders(encoding, res, ctx.config.compression) };
  if (req.method === 'HEAD') {
    // The GET's status and headers (everything up to here was validated as for a GET), with the
    // scan never run: it takes no maxScans slot and cannot be a 503.
    res.writeHead(200, headers);
    res.end();
    return;
  }
  if (ctx.scans.active >= ctx.config.limits.maxScans) {
    throw rgError('RG_ERR_TOO_MANY_SCANS', `${ctx.scans.active} scans are running, the configured maximum; retry shortly`);
  }
  // The slot is taken only once the scan exists: a scan that fails to open must not leak it.
  // One row past a limit tells whether a next page exists and where (scan-trailers.ts); it is never sent.
  const asked = request.limit < 0 ? request : { ...request, limit: request.limit + 1 };
  const onEnd = (rows: number, nextRowKey: Buffer | undefined): void => res.addTrailers(scanTrailers(rows, nextRowKey, ctx.config.revision));
  const onRows = (n: number): void => {
    info.rows = n;
  };
  let body: { readonly streams: NodeJS.ReadableStream[]; readonly rowsSent: () => number };
  let releaseSlot: () => void;
  // Arrow and Parquet from the Arrow batches the store encodes (the LMDB store's scan threads,
  // lib/store/lmdb/arrow-chunk.ts): the IPC stream's schema and end written here (stages/arrow.ts),
  // or parquet-wasm writing the batches (stages/parquet-arrow.ts). The row past a limit is never
  // encoded: the source names it, and RowStream (no limit of its own) sends every chunk.
  const columnar = ctx.store.scanChunks === undefined ? undefined : await columnarBody(format, layout, request.read.maxVersions);
  if (columnar !== undefined) {
    const source = columnar.source(ctx.store.scanChunks!(params.instance!, params.table!, asked, columnar.spec(request.limit)));
    releaseSlot = ctx.scans.acquire();
    body = await chunkBody(source, releaseSlot, onRows, { limit: -1, onEnd: (rows) => onEnd(rows, source.nextRowKey) });
  } else if (format === 'avro' || format === 'arrow' || format === 'parquet') {
    // Avro, Arrow and Parquet are encoded from the filtered rows' cells (stages/avro.ts, stages/arrow.ts). A store that cannot open the
    // scan throws here, before the headers; its later failures truncate the stream.
    const encoder = await cellEncoder(ctx, layout, format, request.read);
    const rows = filteredRows(ctx.store, params.instance!, params.table!, asked, layout);
    releaseSlot = ctx.scans.acquire();
    const limit = new LimitStage(request.limit, onEnd, onRows);
    body = { streams: [rows, limit, encoder], rowsSent: () => limit.rowsSent };
  } else {
    const source = scanSource(ctx.store, params.instance!, params.table!, asked, layout, rowRenderSpec(ctx.config.revision, terminatorOf(format)));
    releaseSlot = ctx.scans.acquire();
    body = await chunkBody(source, releaseSlot, onRows, { limit: request.limit, onEnd });
  }
  info.scan = true;
  res.writeHead(200, headers);
  dropWhenStalled(res, ctx.config.limits.stallTimeoutMs, () => {
    ctx.log.warn({ url: req.url, rowsSent: body.rowsSent(), stallTimeoutMs: ctx.config.limits.stallTimeoutMs }, 'scan client read nothing; dropped');
  });
  const stages: NodeJS.ReadWriteStream[] = encoding === undefined ? [] : [compressor(encoding)];
  await new Promise<void>((resolve) => {
    pipeline([...body.streams, ...stages, res], (err) => {
      releaseSlot();
      info.rows = body.rowsSent();
      if (err && !res.destroyed) res.destroy(err);
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.log.error({ err, url: req.url }, 'scan failed mid-stream');
      resolve();
    });
  });
}
