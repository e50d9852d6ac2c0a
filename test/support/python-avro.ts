/**
 * Reading Avro container files with Apache Avro's own Python reader (Debian's python3-avro), to
 * check files rowgate writes. AVRO_READER_MISSING says why tests skip when it is not installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PYTHON = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));

export const AVRO_READER_MISSING = "python3-avro (Apache Avro's Python reader) is not installed: apt-get install python3-avro";

export function hasPythonAvro(): boolean {
  return PYTHON !== undefined && spawnSync(PYTHON, ['-c', 'import avro.datafile, avro.io'], { encoding: 'utf8' }).status === 0;
}

/**
 * The records of an Avro container file as python3-avro reads them, as JSON lines: bytes as hex,
 * longs exact; plus the writer schema from the header.
 */
export function readWithPythonAvro(path: string): { schema: unknown; records: string[] } {
  const script = `
import avro.datafile, avro.io, json, sys
def plain(v):
    if isinstance(v, bytes): return v.hex()
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list): return [plain(x) for x in v]
    return v
r = avro.datafile.DataFileReader(open(sys.argv[1], 'rb'), avro.io.DatumReader())
print(json.dumps(json.loads(r.meta['avro.schema'].decode())))
for rec in r: print(json.dumps(plain(rec), sort_keys=True))
`;
  const r = spawnSync(PYTHON!, ['-c', script, path], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`python3-avro could not read ${path}: ${r.stderr}`);
  const [schema, ...records] = r.stdout.trimEnd().split('\n');
  return { schema: JSON.parse(schema!), records: records.filter((l) => l !== '') };
}
