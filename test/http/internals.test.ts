/**
 * One test per reach into a dependency's internals (lib/deps/internals.ts), each against the real
 * package: a pino logger, node's sockets on 127.0.0.1, an LMDB environment in a temporary
 * directory, a prom-client Registry, a Bigtable client. Each fails when an upgrade removes or
 * changes what rowgate relies on; the packages are pinned to exact versions for that reason.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import avro from 'avsc';
import { Command, CommanderError } from 'commander';
import { open } from 'lmdb';
import { pino } from 'pino';
import { AggregatorRegistry, Registry } from 'prom-client';
import t, { type Test } from 'tap';
import {
  bigtableDataStub,
  grpcMetadata,
  grpcMethod,
  isLmdbWriteThreadError,
  pinoBindings,
  pinoDestination,
  pinoTime,
  replaceLmdbReadKey,
  socketResponse,
  socketWriteQueueSize,
  unknownOptionBeforeMissing,
  withAvroWrite,
} from '../../lib/deps/internals.js';
import { PlainCounter, PlainHistogram } from '../../lib/metrics/plain-metrics.js';
import { REPO_ROOT } from '../support/repo-root.js';

const ROOT = REPO_ROOT;

function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test("pino: a logger's destination, time and bindings are the pieces of the lines it writes", async (t) => {
  const lines: string[] = [];
  const destination = { write: (line: string) => lines.push(line) };
  const log = pino({ base: { service: 'rowgate' }, timestamp: () => ',"time":42' }, destination);
  const child = log.child({ instance: 'i' });
  t.equal(pinoDestination(child), destination, "the logger's own destination");
  t.equal(pinoTime(child)?.(), ',"time":42');
  t.equal(pinoBindings(log), ',"service":"rowgate"');
  t.equal(pinoBindings(child), ',"service":"rowgate","instance":"i"', "a child's bindings after its parent's");
  // What the access log assumes: pino's line is level, time, bindings, the fields, msg.
  child.info({ reqId: 'r' }, 'request');
  t.same(lines, [`{"level":30${pinoTime(child)!()}${pinoBindings(child)},"reqId":"r","msg":"request"}\n`]);

  t.match(pinoTime(pino({}, destination))!(), /^,"time":\d{13}$/, "pino's default time, epoch milliseconds");
  t.equal(pinoTime(pino({ timestamp: false }, destination))!(), '', 'timestamps off: empty');
  t.equal(pinoBindings(pino({ base: null }, destination)), '', 'no bindings');
});

t.test("socket._httpMessage: the socket's response while a request is answered, none once it is done", async (t) => {
  let during: ServerResponse | undefined;
  let response: ServerResponse | undefined;
  let after: ServerResponse | undefined | null = null;
  const server = createHttpServer((req, res) => {
    response = res;
    during = socketResponse(req.socket);
    res.on('finish', () => setImmediate(() => (after = socketResponse(req.socket))));
    res.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const [res] = (await once(get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent: false }), 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  await new Promise((r) => setTimeout(r, 20));
  t.ok(response !== undefined && during === response, 'the response being written');
  t.equal(after, undefined, 'detached once finished');
});

t.test('socket._handle.writeQueueSize: a number on a connected socket, counting what the kernel has not taken', async (t) => {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.pause();
  const [socket] = (await once(server, 'connection')) as [Socket];
  t.equal(socketWriteQueueSize(socket), 0, 'nothing queued on an idle socket');
  // More than the two ends' kernel buffers hold while the client reads nothing.
  const size = 64 * 1024 * 1024;
  t.notOk(socket.write(Buffer.alloc(size)), 'the write waits for the client');
  const queued = socketWriteQueueSize(socket);
  t.ok(queued !== undefined && queued > 0 && queued <= size, `libuv holds what the kernel has not taken (${queued} bytes)`);
  let received = 0;
  client.on('data', (chunk: Buffer) => (received += chunk.length));
  client.resume();
  await once(socket, 'drain');
  t.equal(socketWriteQueueSize(socket), 0, 'empty once the client took it');
  socket.end();
  await once(client, 'end');
  t.equal(received, size);
  client.destroy();
  socket.destroy();
  await once(socket, 'close');
  t.equal(socketWriteQueueSize(socket), undefined, 'no count once closed');
});

t.test('lmdb-js Database.readKey: called with the key buffer and span for each key getRange yields, its result the key', async (t) => {
  const env = open({ path: tempDir(t, 'rowgate-internals-lmdb-') });
  t.teardown(() => env.close());
  const db = env.openDB<Buffer, Buffer>({ name: 't', keyEncoding: 'binary', encoding: 'binary' });
  const keys = [Buffer.from('a'), Buffer.from('bb\u0000x'), Buffer.from('c'.repeat(300))];
  for (const key of keys) db.putSync(key, Buffer.from('v'));
  t.same(
    [...db.getRange({})].map((e) => Buffer.isBuffer(e.key)),
    [true, true, true],
    'copied Buffers before the replacement',
  );

  const seen: string[] = [];
  const MARK = Symbol('key in place');
  replaceLmdbReadKey(db, (bytes, start, end) => {
    seen.push(Buffer.from(bytes.subarray(start, end)).toString('latin1'));
    return MARK;
  });
  const yielded = [...db.getRange({ start: Buffer.from('a') })].map((e) => e.key as unknown);
  t.same(yielded, [MARK, MARK, MARK], 'getRange yields what the replacement returns');
  t.same(
    seen,
    keys.map((k) => k.toString('latin1')),
    'each key read at bytes[start, end)',
  );
  t.throws(() => replaceLmdbReadKey({} as typeof db, () => 0), /internals changed/, 'a Database without readKey is refused, not silently ignored');
});

t.test(
  "lmdb-js: a failed asynchronous commit's error comes from its write module (write.js)",
  { skip: process.platform === 'win32' && 'needs ulimit' },
  async (t) => {
    // A file size limit fails the commit in lmdb-js's write thread (EIO: node ignores SIGXFSZ).
    const script = `
    import { Command, CommanderError } from 'commander';
import { open } from 'lmdb';
    const report = (kind, e) => process.stdout.write(JSON.stringify({ kind, message: e.message, code: e.code, stack: e.stack }) + '\\n');
    const print = console.error;
    console.error = (...args) => (args.length === 1 && args[0] instanceof Error ? report('printed', args[0]) : print(...args));
    // lmdb-js also rejects a promise no caller holds (its event turn's batch): the gateway ignores it (write-failures.ts).
    process.on('unhandledRejection', () => {});
    const env = open({ path: process.argv[1] });
    const db = env.openDB({ name: 't', encoding: 'binary' });
    try {
      await db.transaction(() => { for (let i = 0; i < 64; i++) db.put(Buffer.from([i]), Buffer.alloc(65536, 1)); });
    } catch (e) {
      await e.commitError.catch((cause) => report('cause', cause));
    }
  `;
    const dir = tempDir(t, 'rowgate-internals-commit-');
    const r = spawnSync('sh', ['-c', 'ulimit -f 1024 && exec "$0" --input-type=module -e "$1" "$2"', process.execPath, script, join(dir, 'db')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(r.status, 0, r.stderr);
    const reports = r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { kind: string; message: string; code: unknown; stack: string });
    t.same(reports.map((e) => e.kind).sort(), ['cause', 'printed'], 'printed by lmdb-js, and the cause of the rejected commit');
    for (const report of reports) {
      const error = Object.assign(new Error(report.message), { code: report.code });
      error.stack = report.stack;
      t.equal(typeof report.code, 'number', `${report.kind}: an LMDB error code (${String(report.code)})`);
      t.ok(isLmdbWriteThreadError(error), `${report.kind}: from lmdb-js's write module\n${report.stack}`);
    }
    t.notOk(isLmdbWriteThreadError(Object.assign(new Error('Input/output error'), { code: 5 })), 'an error raised elsewhere is not');
    t.notOk(isLmdbWriteThreadError('/lmdb/write.js'), 'nor what is not an Error');
  },
);

t.test('prom-client: a Registry holds metrics that are not its classes, and reads them as its own', async (t) => {
  const registry = new Registry();
  const counter = new PlainCounter({ name: 'rg_requests_total', help: 'Requests.', labelNames: ['route'], registers: [registry] });
  const histogram = new PlainHistogram({ name: 'rg_seconds', help: 'Durations.', labelNames: ['route'], buckets: [0.1, 1], registers: [registry] });
  counter.labels('/a').value += 3;
  histogram.labels('/a').observe(0.5);
  t.equal(
    await registry.metrics(),
    [
      '# HELP rg_requests_total Requests.',
      '# TYPE rg_requests_total counter',
      'rg_requests_total{route="/a"} 3',
      '',
      '# HELP rg_seconds Durations.',
      '# TYPE rg_seconds histogram',
      'rg_seconds_bucket{route="/a",le="0.1"} 0',
      'rg_seconds_bucket{route="/a",le="1"} 1',
      'rg_seconds_bucket{route="/a",le="+Inf"} 1',
      'rg_seconds_sum{route="/a"} 0.5',
      'rg_seconds_count{route="/a"} 1',
      '',
    ].join('\n'),
  );
  const json = await registry.getMetricsAsJSON();
  t.same(
    json.map((m) => [m.name, m.type]),
    [
      ['rg_requests_total', 'counter'],
      ['rg_seconds', 'histogram'],
    ],
  );
  // --workers: the primary sums every worker's JSON.
  const summed = await AggregatorRegistry.aggregate([json, json]).getMetricsAsJSON();
  t.same(summed[0]!.values, [{ labels: { route: '/a' }, value: 6 }]);
  t.equal(summed[1]!.values.find((v) => (v as { metricName?: string }).metricName === 'rg_seconds_count')?.value, 2);
  registry.resetMetrics();
  t.same((await registry.getMetricsAsJSON())[0]!.values, [], 'resetMetrics resets them');
  t.throws(() => new PlainCounter({ name: 'rg_requests_total', help: '', labelNames: [], registers: [registry] }), /already been registered/);
});

t.test("@google-cloud/bigtable: the data client's gRPC stub, its ReadRows method and google-gax's Metadata make a call", async (t) => {
  // A port nothing listens on: the call must reach grpc-js and fail there as unavailable.
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  probe.close();
  process.env.BIGTABLE_EMULATOR_HOST = `127.0.0.1:${port}`;
  const { Bigtable } = await import('@google-cloud/bigtable');
  const bigtable = new Bigtable({ projectId: 'p' });
  t.teardown(() => bigtable.close());
  const stub = await bigtableDataStub(bigtable);
  t.ok(bigtable.api.BigtableClient !== undefined, 'the client kept where bigtable.request() and close() find it');
  t.equal(await bigtableDataStub(bigtable), stub, 'one stub');
  const method = grpcMethod(stub, 'ReadRows');
  t.equal(method.path, '/google.bigtable.v2.Bigtable/ReadRows');
  const tableName = 'projects/p/instances/i/tables/t';
  const bytes = method.requestSerialize({ tableName, rowsLimit: 1 });
  t.ok(Buffer.isBuffer(bytes) && bytes.includes(Buffer.from(tableName)), 'the request serialized as protobuf');
  const metadata = grpcMetadata();
  metadata.set('x-goog-request-params', 'table_name=t');
  const call = stub.makeServerStreamRequest(method.path, method.requestSerialize, (b) => b, { tableName }, metadata, { deadline: Date.now() + 10_000 });
  const [error] = (await once(call, 'error').catch((e: unknown) => [e])) as [{ code?: number }];
  t.equal(error.code, 14, 'UNAVAILABLE from grpc-js (the metadata taken as its own)');
  t.throws(() => grpcMethod(stub, 'NoSuchMethod'), /internals changed/);
});

t.test("commander: a command's unknown option is reported before a missing required one", async (t) => {
  const code = (args: string[], door: boolean): string => {
    const cmd = new Command('export').exitOverride().configureOutput({ writeErr: () => undefined });
    cmd
      .requiredOption('--instance <name>')
      .option('--table <name>')
      .action(() => undefined);
    if (door) unknownOptionBeforeMissing(cmd);
    try {
      cmd.parse(args, { from: 'user' });
      return 'parsed';
    } catch (e) {
      return (e as CommanderError).code;
    }
  };
  t.equal(code(['--instnace', 'x'], false), 'commander.missingMandatoryOptionValue', 'commander alone names the missing option');
  t.equal(code(['--instnace', 'x'], true), 'commander.unknownOption', 'through the door: the unknown one');
  t.equal(code(['--table', 'x'], true), 'commander.missingMandatoryOptionValue', 'and still the missing one when nothing is unknown');
  t.equal(code(['--instance', 'i'], true), 'parsed');
});

t.test("avsc: a type's _write writes it inside records and arrays, and its Tap's writeLong and writeFixed write as assumed", async (t) => {
  const base = avro.Type.forSchema('long');
  const written: unknown[] = [];
  const long = withAvroWrite(base, (tap, v) => {
    written.push(v);
    if (typeof v === 'number') tap.writeLong(v);
    else tap.writeFixed(Buffer.from([0x01, 0x02]));
  });
  const record = avro.Type.forSchema({ type: 'record', name: 'r', fields: [{ name: 'xs', type: { type: 'array', items: 'long' } }] }, {
    registry: { long },
  } as never);
  // writeLong is avsc's zigzag varint: 300 -> 600 -> d8 04; writeFixed copies the bytes as given.
  t.same([...record.toBuffer({ xs: [300, 5n] })], [0x04, 0xd8, 0x04, 0x01, 0x02, 0x00], 'array count, both longs, the end');
  t.same(written, [300, 5n], 'the replacement wrote every long, numbers and bigints');
  t.ok(avro.Type.isType(long), 'still an avsc type');
  t.equal(base.toBuffer(300).toString('hex'), 'd804', 'the original type keeps its own writer');
  t.throws(() => withAvroWrite({}, () => undefined), /internals changed/, 'an object without _write is refused, not silently wrapped');
});
