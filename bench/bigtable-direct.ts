/**
 * Scenario 5's baseline, in its own process (as the gateway is): the Bigtable client's raw
 * ReadRows of the whole table, counting committed rows and nothing else, the fastest honest
 * direct read (the client's createReadStream also assembles row objects and measured about 20%
 * slower). Prints one JSON line: `{"runs":[{"rows":N,"seconds":S,"cpuSeconds":C},...]}`.
 *
 *   node dist/bench/bigtable-direct.js <full table name> <runs>
 *
 * Needs BIGTABLE_EMULATOR_HOST=127.0.0.1:PORT (bench/run.ts passes the emulator's environment).
 */
import { Bigtable } from '@google-cloud/bigtable';

const [tableName, runsText] = process.argv.slice(2);
const RUNS = Number(runsText ?? 2);
if (!tableName || !process.env.BIGTABLE_EMULATOR_HOST?.startsWith('127.0.0.1:') || !(RUNS >= 1 && RUNS <= 20)) {
  process.stderr.write('usage: BIGTABLE_EMULATOR_HOST=127.0.0.1:PORT node bigtable-direct.js <table name> <runs 1-20>\n');
  process.exit(2);
}

const bigtable = new Bigtable({ projectId: tableName.split('/')[1], metricsEnabled: false });

async function readAll(): Promise<number> {
  let rows = 0;
  const stream = bigtable.request({ client: 'BigtableClient', method: 'readRows', reqOpts: { tableName } }) as unknown as AsyncIterable<{
    chunks?: { commitRow?: boolean }[];
  }>;
  for await (const response of stream) {
    for (const chunk of response.chunks ?? []) if (chunk.commitRow) rows++;
  }
  return rows;
}

const runs: { rows: number; seconds: number; cpuSeconds: number }[] = [];
for (let i = 0; i < RUNS; i++) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const rows = await readAll();
  const used = process.cpuUsage(cpu);
  runs.push({ rows, seconds: (performance.now() - started) / 1000, cpuSeconds: Math.round((used.user + used.system) / 1e4) / 100 });
}
process.stdout.write(`${JSON.stringify({ runs })}\n`);
await bigtable.close();
