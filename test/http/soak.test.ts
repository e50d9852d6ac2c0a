/**
 * Soak: concurrent clients mix scans, point reads, posts, deletes, counter increments and scans
 * abandoned mid-stream for a while (ROWGATE_SOAK_SECONDS, default 8; 60 for the full run). Checks:
 * zero 5xx and no failed request (an error on an abandoned scan counts too, unless the test itself
 * hung up), live memory (heap + external after full collections) grown by less than 40 MB (no
 * leak), every scan finished once the clients stop (gateway and store both count 0 open scans
 * within 5 s), every acknowledged write readable afterwards (each carries a unique value), every
 * deleted row gone, every counter equal to the sum of its acknowledged increments. Reports RSS at
 * start and end next to live memory (RSS is not asserted: it holds uncollected garbage).
 * Loopback only.
 */
import { Agent, request as httpRequest } from 'node:http';
import t from 'tap';
import { json, raw, rowsOf, startGateway } from './harness.js';
import { heldMemory } from './instrument.js';

const SECONDS = Number(process.env.ROWGATE_SOAK_SECONDS ?? 8);
const CLIENTS = 8;
const SCAN_ROWS = 3_000;
const COUNTERS = 5;
// 1.1 MB measured; generous for coverage instrumentation and the test's own bookkeeping.
const LIVE_GROWTH_LIMIT = 40 * 1024 * 1024;
/** How long abandoned scans may take to be noticed and returned once the clients stop. */
const SCAN_DRAIN_MS = 5_000;

const SAMPLE = '/v1/instances/default/tables/sample_table/rows';
const PLAYERS = '/v1/instances/default/tables/players/rows';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

interface Reply {
  status: number;
  body: string;
}

type Row = { entityId: string[]; cells: { info?: { email?: { value: string }[]; logins?: { value: number }[] } } };

t.test(`soak: ${CLIENTS} clients for ${SECONDS} s`, async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const base = new URL(h.base);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });
  t.teardown(() => agent.destroy());

  const seed = Array.from({ length: SCAN_ROWS }, (_, i) => ({
    entityId: [i],
    cells: { longs: { n: [{ value: i, timestamp: 1 }] }, strings: { s: [{ value: `row ${i} ${'x'.repeat(60)}`, timestamp: 1 }] } },
  }));
  t.equal((await raw(h.base, 'POST', SAMPLE, JSON.stringify(seed), json)).status, 200, 'seeded the scanned table');

  const statuses = new Map<number, number>();
  const problems: string[] = [];
  let problemCount = 0;
  const problem = (what: string) => {
    problemCount++;
    if (problems.length < 20) problems.push(what);
  };
  let requests = 0;
  let abandoned = 0;
  /** Responses cut after their status line that the test did not cut itself. */
  let aborted = 0;

  const call = (method: string, path: string, body?: string): Promise<Reply | undefined> =>
    new Promise((resolve) => {
      requests++;
      const req = httpRequest(
        { host: base.hostname, port: base.port, method, path, agent, headers: body === undefined ? {} : json, timeout: 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            const reply = { status, body: Buffer.concat(chunks).toString('utf8') };
            if (status !== 200) problem(`${method} ${path.slice(0, 120)}: ${status} ${reply.body.slice(0, 200)}`);
            resolve(status === 200 ? reply : undefined);
          });
          res.on('aborted', () => {
            aborted++;
            problem(`${method} ${path.slice(0, 120)}: response aborted`);
            resolve(undefined);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => {
        problem(`${method} ${path.slice(0, 120)}: ${e.message}`);
        resolve(undefined);
      });
      req.end(body);
    });

  /**
   * Starts a full scan and hangs up after the first chunk. Errors after that hang-up are the
   * test's own doing; any other (refused connection, timeout, a response cut by the server before
   * the first chunk arrived) is a problem.
   */
  const abandonScan = (): Promise<void> =>
    new Promise((resolve) => {
      requests++;
      let hungUp = false;
      const failed = (what: string) => {
        if (!hungUp) problem(`abandoned scan: ${what}`);
        resolve();
      };
      const req = httpRequest({ host: base.hostname, port: base.port, method: 'GET', path: `${SAMPLE}?limit=-1&versions=all`, timeout: 30_000 }, (res) => {
        statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
        if (res.statusCode !== 200) problem(`abandoned scan: ${res.statusCode}`);
        res.once('data', () => {
          abandoned++;
          hungUp = true;
          req.destroy();
          resolve();
        });
        res.on('aborted', () => {
          if (!hungUp) aborted++;
          failed('response aborted');
        });
        res.on('error', (e) => failed(`response: ${e.message}`));
        res.on('end', () => {
          if (!hungUp) problem('abandoned scan: the response ended before its first chunk');
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => failed(e.message));
      req.end();
    });

  /** Acknowledged writes: players row key -> its unique email value. */
  const acked = new Map<string, { components: string[]; value: string }>();
  const deleted = new Map<string, string[]>();
  const counterSums = new Array<number>(COUNTERS).fill(0);
  const ops = new Map<string, number>();
  const opMs = new Map<string, number>();
  const liveStart = heldMemory();
  const rssStart = process.memoryUsage().rss;
  const deadline = Date.now() + SECONDS * 1000;

  const client = async (c: number) => {
    let n = 0;
    const mine: string[] = [];
    while (Date.now() < deadline) {
      const r = Math.random();
      const op = r < 0.3 ? 'post' : r < 0.5 ? 'read' : r < 0.58 ? 'delete' : r < 0.78 ? 'incr' : r < 0.9 ? 'scan' : 'abandon';
      ops.set(op, (ops.get(op) ?? 0) + 1);
      const opStarted = Date.now();
      if (op === 'post') {
        const rows = Array.from({ length: Math.random() < 0.3 ? 3 : 1 }, () => {
          const components = [`c${c}-${n++}`, 'soak'];
          return { components, value: `v-${c}-${n}-${Math.random().toString(36).slice(2)}` };
        });
        const body = rows.map((w) => ({ entityId: w.components, cells: { info: { email: [{ value: w.value, timestamp: 1 }] } } }));
        if (await call('POST', PLAYERS, JSON.stringify(body.length === 1 ? body[0] : body))) {
          for (const w of rows) {
            acked.set(w.components[0]!, w);
            mine.push(w.components[0]!);
          }
        }
      } else if (op === 'read' && mine.length > 0) {
        const key = mine[Math.floor(Math.random() * mine.length)]!;
        const w = acked.get(key)!;
        const reply = await call('GET', `${PLAYERS}?eid=${q(w.components)}`);
        if (reply) {
          const [row] = rowsOf(reply.body) as Row[];
          if (row?.cells.info?.email?.[0]?.value !== w.value) problem(`read of ${key} did not see its acknowledged write: ${reply.body.slice(0, 200)}`);
        }
      } else if (op === 'delete' && mine.length > 0) {
        const key = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!;
        const w = acked.get(key)!;
        if (await call('DELETE', `${PLAYERS}?eid=${q(w.components)}`)) {
          acked.delete(key);
          deleted.set(key, w.components);
        }
      } else if (op === 'incr') {
        const k = Math.floor(Math.random() * COUNTERS);
        const by = 1 + Math.floor(Math.random() * 5);
        if (await call('POST', PLAYERS, JSON.stringify({ entityId: [`counter-${k}`, 'soak'], cells: { info: { logins: [{ value: { incr: by } }] } } })))
          counterSums[k]! += by;
      } else if (op === 'scan') {
        const reply = await call('GET', `${SAMPLE}?limit=-1&cols=longs`);
        if (reply) {
          const rows = rowsOf(reply.body);
          if (rows.length !== SCAN_ROWS) problem(`scan returned ${rows.length} rows, not ${SCAN_ROWS}`);
        }
      } else if (op === 'abandon') {
        await abandonScan();
      }
      opMs.set(op, (opMs.get(op) ?? 0) + Date.now() - opStarted);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));

  // Every scan, abandoned ones included, is finished and returned to the store shortly after.
  const drainStarted = Date.now();
  while ((h.gateway.context.scans.active !== 0 || h.store.openScans !== 0) && Date.now() - drainStarted < SCAN_DRAIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const drainMs = Date.now() - drainStarted;
  t.equal(h.gateway.context.scans.active, 0, `no scan still counted by the gateway (waited ${drainMs} ms, at most ${SCAN_DRAIN_MS})`);
  t.equal(h.store.openScans, 0, 'no scan still open in the store');

  const rssEnd = process.memoryUsage().rss;
  const liveEnd = heldMemory();

  // Everything acknowledged is there; everything deleted is gone; counters add up.
  const keys = [...acked.values()];
  let missing = 0;
  for (let i = 0; i < keys.length; i += 200) {
    const batch = keys.slice(i, i + 200);
    const reply = await raw(h.base, 'GET', `${PLAYERS}?limit=-1&eids=${q(batch.map((w) => w.components))}`);
    t.equal(reply.status, 200);
    const byKey = new Map((rowsOf(reply.body) as Row[]).map((row) => [row.entityId[0]!, row.cells.info?.email?.[0]?.value]));
    for (const w of batch) {
      if (byKey.get(w.components[0]!) !== w.value) {
        missing++;
        if (missing <= 3) t.comment(`missing ${JSON.stringify(w)}: got ${JSON.stringify(byKey.get(w.components[0]!))}`);
      }
    }
  }
  t.equal(missing, 0, `all ${keys.length} acknowledged writes are readable with their values`);
  let resurrected = 0;
  const gone = [...deleted.values()];
  for (let i = 0; i < gone.length; i += 200) {
    const reply = await raw(h.base, 'GET', `${PLAYERS}?limit=-1&eids=${q(gone.slice(i, i + 200))}`);
    for (const row of rowsOf(reply.body) as Row[]) if (row.cells.info !== undefined) resurrected++;
  }
  t.equal(resurrected, 0, `all ${gone.length} acknowledged deletes hold`);
  for (let k = 0; k < COUNTERS; k++) {
    const reply = await raw(h.base, 'GET', `${PLAYERS}?eid=${q([`counter-${k}`, 'soak'])}&cols=info:logins`);
    const [row] = rowsOf(reply.body) as Row[];
    t.equal(row?.cells.info?.logins?.[0]?.value ?? 0, counterSums[k], `counter ${k} is the sum of its acknowledged increments`);
  }

  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
  t.comment(
    `soak: ${requests} requests in ${SECONDS} s by ${CLIENTS} clients (${JSON.stringify(Object.fromEntries(ops))}); statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${abandoned} scans abandoned mid-stream`,
  );
  t.comment(`soak: mean ms per operation ${JSON.stringify(Object.fromEntries([...ops].map(([op, n]) => [op, Math.round((opMs.get(op) ?? 0) / n)])))}`);
  t.comment(`soak: ${keys.length} acknowledged rows verified, ${gone.length} deletes, counters ${JSON.stringify(counterSums)}`);
  t.comment(
    `soak summary: ${requests} requests in ${SECONDS} s, ${fiveXX} 5xx, ${aborted} aborted, ${problemCount} problems; ` +
      `RSS start ${mb(rssStart)}, end ${mb(rssEnd)}; live heap + external start ${mb(liveStart)}, end ${mb(liveEnd)}`,
  );
  t.equal(fiveXX, 0, 'no 5xx');
  t.equal(problems.join('\n'), '', 'no failed request');
  t.equal(problemCount, 0, `${problemCount} problems`);
  t.ok(liveEnd - liveStart < LIVE_GROWTH_LIMIT, `live memory grew ${mb(liveEnd - liveStart)} (limit ${mb(LIVE_GROWTH_LIMIT)})`);
  t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'the server still answers');
  t.ok(requests > SECONDS * 20, 'the clients kept the server busy');
});
