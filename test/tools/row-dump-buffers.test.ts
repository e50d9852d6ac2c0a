/**
 * `rowgate export --data` gives each scan chunk's buffer back to its scan thread once the file
 * (or standard output) has written it (tools/support/row-dump.ts, Output's `sink`), as the gateway
 * does once the socket has (test/http/scan-buffers.test.ts). A buffer given back too early would
 * be rendered into again while its bytes were still on their way out: every export here is
 * compared byte for byte with the single-thread rendering, through a sink that takes its time
 * and only reads a chunk's bytes when it finishes the write.
 */
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import t from 'tap';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import { ROW_TERMINATOR } from '../../lib/rows/row-format.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { Output } from '../../tools/support/output.js';
import { dumpRows } from '../../tools/support/row-dump.js';
import { openSampleStore, sampleRows, serializedScan } from '../store/lmdb-fixtures.js';
import { tempDir } from '../cli/helpers.js';

const ROWS = 4000;

const { store, layout } = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } }, 'i');
await store.write('i', 'sample_table', sampleRows(layout, ROWS));
const pool = store.scanPool!;
const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, {}) };
const expected = await serializedScan(store, 'i', 'sample_table', request, layout, 3);

function dump(output: Output): Promise<unknown> {
  return dumpRows({ store, instance: 'i', table: 'sample_table', layout, selection: { kind: 'scan', request }, output, terminator: ROW_TERMINATOR });
}

/** A sink that finishes each write after a pause and only then copies the chunk's bytes. */
function lateSink(): { stream: Writable; text: () => string } {
  const parts: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, done) {
      setTimeout(() => {
        parts.push(Buffer.from(chunk));
        done();
      }, 1);
    },
  });
  return { stream, text: () => Buffer.concat(parts).toString('utf8') };
}

t.test('written to a file, the export is the single-thread bytes and its chunk buffers go back to the scan threads', async (t) => {
  const file = join(tempDir(t), 'rows.json');
  const before = pool.buffersGivenBack;
  const stream = createWriteStream(file);
  const output = new Output(stream, true);
  await dump(output);
  await output.end();
  t.equal(readFileSync(file, 'utf8'), expected);
  t.ok(pool.buffersGivenBack > before, `${pool.buffersGivenBack - before} chunk buffers went back`);
});

t.test('a sink that finishes its writes late still gets every byte as rendered', async (t) => {
  for (let round = 0; round < 3; round++) {
    const before = pool.buffersGivenBack;
    const sink = lateSink();
    const output = new Output(sink.stream, true);
    await dump(output);
    await output.end();
    t.equal(sink.text(), expected, `round ${round}`);
    t.ok(pool.buffersGivenBack > before, `round ${round}: buffers went back`);
  }
});

t.test('a stage that is no sink (another format) keeps the chunks: nothing goes back, the same bytes come out', async (t) => {
  const before = pool.buffersGivenBack;
  const stage = new PassThrough();
  const sink = lateSink();
  stage.pipe(sink.stream);
  const output = new Output(stage);
  await dump(output);
  await output.end();
  await new Promise((resolve) => sink.stream.on('finish', resolve));
  t.equal(sink.text(), expected);
  t.equal(pool.buffersGivenBack, before, 'no buffer went back');
});

t.test('two exports at once, one rendered partly into buffers the other gave back, each write their own rows', async (t) => {
  const dir = tempDir(t);
  const files = [join(dir, 'a.json'), join(dir, 'b.json')];
  await Promise.all(
    files.map(async (file) => {
      const output = new Output(createWriteStream(file), true);
      await dump(output);
      await output.end();
    }),
  );
  for (const file of files) {
    const chunks: Buffer[] = [];
    for await (const c of createReadStream(file)) chunks.push(c as Buffer);
    t.equal(Buffer.concat(chunks).toString('utf8'), expected, file);
  }
  t.equal(store.openScans, 0, 'every scan closed');
});
