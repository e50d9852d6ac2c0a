/**
 * Every place rowgate reaches into another package's internals (or node's undocumented socket
 * fields), behind one door. Each reach is here because the public way measured slower or cannot
 * say what is needed; each has a test in test/http/internals.test.ts against the real package that
 * fails when an upgrade removes or changes what it relies on, and the packages are pinned to exact
 * versions in package.json (lmdb, pino, prom-client, @google-cloud/bigtable, avsc): upgrading one means
 * running that test first.
 *
 * - pino's streamSym, timeSym and chindingsSym (http/request-log.ts): the access log writes the
 *   line pino would write, from a template, to pino's own destination. pino's serializer cost
 *   about 2.9 us of CPU a line, the template 0.13 us, of ~20 us for a whole point read (9bb48c5).
 * - socket._httpMessage (http/client-error.ts): the response node has on a socket, which a
 *   clientError answer must not write into or overtake (pipelining). Node's own default clientError
 *   handler reads the same field; nothing public says it (36e126b).
 * - socket._handle.writeQueueSize (http/stall.ts): bytes libuv still holds for the kernel, so a
 *   client that takes part of one large write counts as reading. node's socket timeout reads it
 *   too; with the timeout itself a stalled client was dropped at 2-2.7x the setting (9964870).
 * - lmdb-js Database.readKey (store/lmdb/scan-worker.ts): scan threads leave each key in lmdb-js's
 *   key buffer instead of a copied Buffer: 3.5-4.6M entries/s against 2.1-3.1M (c5d6bc2).
 * - lmdb-js's write.js in error stacks (store/lmdb/write-failures.ts): a failed asynchronous
 *   commit's LMDB error reaches the process only as an orphaned rejection and a console.error from
 *   lmdb-js's write module, whose stack is the one mark it carries (c8146bd: a full disk ended the
 *   gateway).
 * - prom-client's Registry given a metric that is no prom-client class (metrics/plain-metrics.ts):
 *   the registry reads name, get() and reset() and nothing else, so per-request series can be
 *   plain additions; prom-client hashed a labels object on every observe (600 -> 300 ns a
 *   request's metrics, 4d240f9).
 * - @google-cloud/bigtable's gapic client cache (bigtable.api), its gRPC stub as a @grpc/grpc-js
 *   Client and google-gax's Metadata class (store/bigtable/bigtable-client.ts): ReadRows read as
 *   wire bytes, without the client's protobuf objects and stream layers (gateway/direct ReadRows
 *   0.30 -> 1.18 on the emulator, 29437ab).
 *
 * - commander's Command.missingMandatoryOptionValue and unknownOption (tools/rowgate-cli.ts):
 *   commander checks required options before unknown ones, so `--instnace x` was reported as a
 *   missing --instance; the CLI names the unknown option first, with commander's own message.
 *
 * - avsc's Type._write and its Tap's writeLong and writeFixed (model/avro/export-long.ts): the Avro
 *   export's long writes a number with avsc's own integer writer and only a bigint through its
 *   bytes, where the public custom-long hook (LongType.__with) makes every long a buffer copied
 *   into the output: ~13% of a scan thread's Avro export.
 *
 * Nothing here loads a package at import: the scan threads import this module for readKey alone,
 * and the Bigtable client takes ~280 ms to load. A caller of a pino or Bigtable function already
 * holds that package's objects, so the lazy loads below find it loaded.
 */
import type { Bigtable } from '@google-cloud/bigtable';
import type { Command } from 'commander';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { Database } from 'lmdb';
import type { Logger, pino } from 'pino';
import type { Metric, Registry } from 'prom-client';

const require = createRequire(import.meta.url);

/** An internal no longer where this module expects it: an upgrade changed the package. */
function changed(what: string): Error {
  return new Error(`${what}: the package's internals changed (see lib/deps/internals.ts and test/http/internals.test.ts)`);
}

// pino

let symbols: typeof pino.symbols | undefined;
function pinoSymbols(): typeof pino.symbols {
  return (symbols ??= (require('pino') as typeof pino).symbols);
}

type PinoInternals = Record<symbol, unknown>;

/** Where a pino logger writes its lines (its destination stream, or a LogSink). */
export function pinoDestination(log: Logger): { write(line: string): unknown } {
  const stream = (log as unknown as PinoInternals)[pinoSymbols().streamSym] as { write?: unknown } | undefined;
  if (typeof stream?.write !== 'function') throw changed('pino logger without a stream (streamSym)');
  return stream as { write(line: string): unknown };
}

/** The logger's time function: the `,"time":...` its lines carry (empty with timestamps off); undefined if pino has none. */
export function pinoTime(log: Logger): (() => string) | undefined {
  const time = (log as unknown as PinoInternals)[pinoSymbols().timeSym];
  return typeof time === 'function' ? (time as () => string) : undefined;
}

/** The logger's bindings as its lines carry them (`,"pid":1,...`, a child's after its parent's); empty for none. */
export function pinoBindings(log: Logger): string {
  const bindings = (log as unknown as PinoInternals)[pinoSymbols().chindingsSym];
  return typeof bindings === 'string' ? bindings : '';
}

// node's sockets

/** The response node has on the socket (being written, or owed to a request read), if any. */
export function socketResponse(socket: Duplex): ServerResponse | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
}

/** Bytes libuv still queues for the kernel on the socket; undefined where the handle has no count (closed, or another kind). */
export function socketWriteQueueSize(socket: Socket): number | undefined {
  const size = (socket as unknown as { _handle?: { writeQueueSize?: unknown } | null })._handle?.writeQueueSize;
  return typeof size === 'number' ? size : undefined;
}

// lmdb-js

/**
 * Makes `db` yield each key as `readKey(bytes, start, end)` returns it instead of a copied Buffer:
 * lmdb-js calls it with its key buffer and the key's span, valid until the next read.
 */
export function replaceLmdbReadKey(db: Database, readKey: (bytes: Buffer, start: number, end: number) => unknown): void {
  const target = db as unknown as { readKey?: unknown };
  if (typeof target.readKey !== 'function') throw changed('lmdb-js Database without readKey');
  target.readKey = readKey;
}

/**
 * Whether `e` was raised in lmdb-js's write module: a failed asynchronous commit's LMDB error,
 * which lmdb-js also prints with console.error (its ESM build's write.js; the CommonJS build,
 * dist/index.cjs, is not what rowgate loads).
 */
export function isLmdbWriteThreadError(e: unknown): boolean {
  return e instanceof Error && e.stack?.includes('/lmdb/write.js') === true;
}

// prom-client

/** A metric prom-client's Registry can hold without being one of its classes: what the registry reads of it. */
export interface RegistryMetric {
  readonly name: string;
  /** As prom-client's own get(): a sample's metricName (a histogram's `_bucket`, `_sum`, `_count`) defaults to the metric's name. */
  get(): Promise<{
    readonly name: string;
    readonly help: string;
    readonly type: string;
    readonly aggregator: string;
    readonly values: readonly { readonly value: number; readonly labels: Record<string, string>; readonly metricName?: string }[];
  }>;
  reset(): void;
}

/** Registers `metric` in `registry`, beside prom-client's own: /metrics, getMetricsAsJSON and AggregatorRegistry read it. */
export function registerMetric(registry: Registry, metric: RegistryMetric): void {
  registry.registerMetric(metric as unknown as Metric);
}

// @google-cloud/bigtable

/** The part of a gapic client's gRPC stub (a @grpc/grpc-js Client) a wire-level call uses: the client's channel, credentials and interceptors. */
export interface GrpcStub {
  makeServerStreamRequest(
    path: string,
    serialize: (value: unknown) => Buffer,
    deserialize: (bytes: Buffer) => Buffer,
    argument: unknown,
    metadata: GrpcMetadata,
    options: object,
  ): Readable & { cancel(): void };
}

/** One method of a stub's service: its path and the client's own request serializer. */
export interface GrpcMethod {
  readonly path: string;
  readonly requestSerialize: (value: unknown) => Buffer;
}

export interface GrpcMetadata {
  set(key: string, value: string): void;
}

/**
 * The gRPC stub of the data API's gapic client that `bigtable.request()` uses, created as it
 * creates it when it has not yet (kept in bigtable.api, so bigtable.close() closes it).
 */
export async function bigtableDataStub(bigtable: Bigtable): Promise<GrpcStub> {
  const { v2 } = await import('@google-cloud/bigtable');
  const api = bigtable.api as Record<string, unknown>;
  let client = api.BigtableClient as InstanceType<typeof v2.BigtableClient> | undefined;
  if (client === undefined) {
    const options = (bigtable.options as Record<string, unknown>).BigtableClient;
    if (options === undefined) throw changed('Bigtable without options.BigtableClient');
    client = new v2.BigtableClient(options as ConstructorParameters<typeof v2.BigtableClient>[0]);
    api.BigtableClient = client;
  }
  const stub = (await client.initialize()) as unknown as Partial<GrpcStub>;
  if (typeof stub.makeServerStreamRequest !== 'function') throw changed('Bigtable gapic stub without makeServerStreamRequest');
  return stub as GrpcStub;
}

/** The stub's method `name` (as the service's proto spells it, `ReadRows`). */
export function grpcMethod(stub: GrpcStub, name: string): GrpcMethod {
  const method = (stub.constructor as { service?: Record<string, Partial<GrpcMethod>> }).service?.[name];
  if (typeof method?.path !== 'string' || typeof method.requestSerialize !== 'function') throw changed(`gRPC stub without its service's ${name}`);
  return method as GrpcMethod;
}

let Metadata: (new () => GrpcMetadata) | undefined;

/**
 * New gRPC metadata of the grpc-js copy the Bigtable client's google-gax loads: the stub checks
 * `instanceof`, so it must be that copy's class.
 */
export function grpcMetadata(): GrpcMetadata {
  Metadata ??= (createRequire(require.resolve('@google-cloud/bigtable'))('google-gax') as { grpc: { Metadata: new () => GrpcMetadata } }).grpc.Metadata;
  return new Metadata();
}

// commander

interface CommandInternals {
  missingMandatoryOptionValue?: (option: unknown) => void;
  unknownOption?: (flag: string) => void;
}

/**
 * Makes `cmd` report an unknown option on its command line (with commander's "Did you mean")
 * before a required option that is missing: commander checks the required ones first.
 */
export function unknownOptionBeforeMissing(cmd: Command): void {
  const internals = cmd as unknown as CommandInternals;
  const missing = internals.missingMandatoryOptionValue;
  const unknownOption = internals.unknownOption;
  if (typeof missing !== 'function' || typeof unknownOption !== 'function')
    throw changed('commander Command without missingMandatoryOptionValue or unknownOption');
  internals.missingMandatoryOptionValue = (option) => {
    const known = new Set(cmd.options.flatMap((o) => [o.long, o.short]).concat(['--help', '-h']));
    const unknown = cmd.args.map((a) => a.split('=')[0]!).find((a) => a.startsWith('-') && a !== '-' && !known.has(a));
    if (unknown !== undefined) unknownOption.call(cmd, unknown);
    else missing.call(cmd, option);
  };
}

/** avsc's output position as a type's writer gets it: the buffer, the position, and its writers. */
export interface AvroTap {
  readonly buf: Buffer;
  pos: number;
  /** avsc's zigzag varint of a number (exact for integers of magnitude below 2^52). */
  writeLong(n: number): void;
  /** Copies `bytes` at the position (the position moves past the buffer's end when they do not fit: avsc then grows it). */
  writeFixed(bytes: Buffer): void;
}

/**
 * `type` (an avsc type, which avsc freezes) writing its values with `write` instead of its own
 * writer: a type that inherits everything else from it.
 */
export function withAvroWrite<T extends object>(type: T, write: (tap: AvroTap, value: unknown) => void): T {
  if (typeof (type as { _write?: unknown })._write !== 'function') throw changed('avsc Type without _write');
  return Object.freeze(Object.create(type, { _write: { value: write } })) as T;
}
