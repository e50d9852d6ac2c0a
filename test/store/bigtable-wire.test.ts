/**
 * The scan's wire-level ReadRows decoding (read-rows-wire.ts) against the Bigtable client's own
 * protobuf encoder: the same rows come out of ChunkMerger whether chunks arrive as the client's
 * objects or as wire bytes (split values, reset rows, carried-over families and qualifiers,
 * extreme timestamps, unknown fields); and the read filters the store sends (read-filter.ts).
 * No emulator needed: the encoder is the client's, the bytes are what a server sends.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { END_OF_TIME } from '../../lib/model/read/read-request.js';
import { FOREVER } from '../../lib/model/types.js';
import { buildReadFilter } from '../../lib/store/bigtable/read-filter.js';
import { forEachChunk, newFlatChunk } from '../../lib/store/bigtable/read-rows-wire.js';
import { ChunkMerger, type CellChunk, type RawRow } from '../../lib/store/bigtable/row-assembler.js';
import { RAW_LAYOUT } from './conformance.js';

interface ProtoType {
  fromObject(o: object): unknown;
  encode(m: unknown): { finish(): Uint8Array };
}
const protos = createRequire(import.meta.url)('@google-cloud/bigtable/build/protos/protos.js') as {
  google: { bigtable: { v2: { ReadRowsResponse: ProtoType } } };
};
const ReadRowsResponse = protos.google.bigtable.v2.ReadRowsResponse;

const encode = (response: object): Buffer => Buffer.from(ReadRowsResponse.encode(ReadRowsResponse.fromObject(response)).finish());
const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const view = (rows: RawRow[]): string[] =>
  rows.map((r) => `${r.rowKey.toString('hex')}|${r.cells.map((c) => `${c.family}:${c.qualifier}@${c.timestamp}=${c.value.toString('hex')}`).join(',')}`);

function viaWire(messages: Buffer[]): RawRow[] {
  const merger = new ChunkMerger();
  const rows: RawRow[] = [];
  const chunk = newFlatChunk();
  for (const m of messages) {
    forEachChunk(m, chunk, (c) => {
      const row = merger.pushFlat(c);
      if (row) rows.push(row);
    });
  }
  return rows;
}

t.test('wire-decoded chunks merge into the same rows as the client objects', async (t) => {
  const responses: { chunks: (CellChunk & { labels?: string[] })[]; lastScannedRowKey?: Buffer }[] = [
    {
      chunks: [
        // Row r1: two families, a qualifier carried over (two versions), a value split in three.
        { rowKey: b('r1'), familyName: { value: 'info' }, qualifier: { value: b('name') }, timestampMicros: '1700000000123000', value: b('\u0001\u0000"a"') },
        { timestampMicros: '1000', value: b('\u0001\u0000"old"') },
        { qualifier: { value: b('long qualifier é') }, timestampMicros: '5000', value: b('ab'), valueSize: 6 },
        { value: b('cd'), valueSize: 6 },
        { value: b('ef') },
        { familyName: { value: 'tags' }, qualifier: { value: b('') }, timestampMicros: '0', value: b('empty'), commitRow: true },
      ],
    },
    {
      chunks: [
        // Row r2 is reset halfway and sent again; then a row with extreme timestamps.
        { rowKey: b('r2'), familyName: { value: 'info' }, qualifier: { value: b('x') }, timestampMicros: '2000', value: b('dropped') },
        { resetRow: true },
        { rowKey: b('r2'), familyName: { value: 'info' }, qualifier: { value: b('x') }, timestampMicros: '3000', value: b('kept'), commitRow: true },
      ],
      lastScannedRowKey: b('r2'),
    },
    {
      chunks: [
        {
          rowKey: Buffer.from([0, 255, 1]),
          familyName: { value: 'info' },
          qualifier: { value: Buffer.from([0xc3, 0xa9]) },
          timestampMicros: '9007199254740993000',
          value: b('big'),
          labels: ['l1', 'l2'],
        },
        { qualifier: { value: b('neg') }, timestampMicros: '-1500', value: b('n') },
        { qualifier: { value: b('max') }, timestampMicros: '9223372036854775807', value: b('m') },
        { qualifier: { value: b('safe') }, timestampMicros: '9007199254740991', value: b('s'), commitRow: true },
      ],
    },
  ];
  const objects = new ChunkMerger();
  const expected: RawRow[] = [];
  for (const r of responses)
    for (const c of r.chunks) {
      const row = objects.push(c);
      if (row) expected.push(row);
    }
  const got = viaWire(responses.map(encode));
  t.same(view(got), view(expected));
  t.equal(got.length, 3);
  t.same(
    got[0]!.cells.map((c) => c.value.toString()),
    ['\u0001\u0000"a"', '\u0001\u0000"old"', 'abcdef', 'empty'],
  );
  t.same(
    got[0]!.cells.map((c) => c.timestamp),
    [1700000000123, 1, 5, 0],
  );
  t.same(
    got[1]!.cells.map((c) => c.value.toString()),
    ['kept'],
    'a reset row keeps only what was sent again',
  );
  // Microseconds beyond 2^53 (BigInt path), negative (floor), int64 max.
  t.same(
    got[2]!.cells.map((c) => c.timestamp),
    [9007199254740993n, -2, 9223372036854775n, 9007199254740],
    'exact: bigints beyond 2^53-1',
  );
  t.same(
    got[2]!.cells.map((c) => c.qualifier),
    ['é', 'neg', 'max', 'safe'],
  );
});

t.test('one row split over several messages; a malformed message throws instead of inventing cells', async (t) => {
  const messages = [
    encode({ chunks: [{ rowKey: b('k'), familyName: { value: 'f' }, qualifier: { value: b('q') }, timestampMicros: '1000', value: b('12'), valueSize: 4 }] }),
    encode({ chunks: [{ value: b('34'), commitRow: true }] }),
  ];
  t.same(view(viaWire(messages)), [`${b('k').toString('hex')}|f:q@1=${b('1234').toString('hex')}`]);
  const truncated = messages[0]!.subarray(0, messages[0]!.length - 3);
  t.throws(() => viaWire([truncated]), /malformed ReadRowsResponse/);
});

t.test('read filters: as small as the same result allows', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  const all = { maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME };
  const now = 1_700_000_000_000;
  // Families with different max_versions / TTL: one branch each, selected by column range.
  t.same(buildReadFilter(layout, all, now), {
    interleave: {
      filters: [
        { chain: { filters: [{ columnRangeFilter: { familyName: 'info' } }, { cellsPerColumnLimitFilter: 1 }] } },
        { chain: { filters: [{ columnRangeFilter: { familyName: 'tags' } }, { cellsPerColumnLimitFilter: 1 }] } },
        {
          chain: {
            filters: [
              { columnRangeFilter: { familyName: 'recent' } },
              { cellsPerColumnLimitFilter: 10 },
              { timestampRangeFilter: { startTimestampMicros: String((now - 60_000) * 1000) } },
              { cellsPerColumnLimitFilter: 1 },
            ],
          },
        },
      ],
    },
  });
  // Every family, the same limits, no time range: a single version limit, no selector.
  const plain = parseLayout({ ...layout.desc, locality_groups: [(layout.desc.locality_groups as object[])[0]] });
  t.same(buildReadFilter(plain, all, now), { cellsPerColumnLimitFilter: 1 });
  t.same(buildReadFilter(plain, { ...all, maxVersions: FOREVER }, now), { cellsPerColumnLimitFilter: 3 }, 'versions=all: max_versions');
  t.same(
    buildReadFilter(plain, { ...all, maxVersions: 2, minTimestamp: 5 }, now),
    {
      chain: { filters: [{ cellsPerColumnLimitFilter: 3 }, { timestampRangeFilter: { startTimestampMicros: '5000' } }, { cellsPerColumnLimitFilter: 2 }] },
    },
    'a time range keeps max_versions before it and versions after it',
  );
  t.same(buildReadFilter(plain, { ...all, columns: [{ family: 'info', qualifier: 'name' }] }, now), {
    chain: {
      filters: [
        { columnRangeFilter: { familyName: 'info', startQualifierClosed: b('name'), endQualifierClosed: b('name') } },
        { cellsPerColumnLimitFilter: 1 },
      ],
    },
  });
  t.same(buildReadFilter(plain, { ...all, columns: [{ family: 'nosuch' }] }, now), { blockAllFilter: true });
});
