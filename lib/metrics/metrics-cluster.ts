/**
 * One /metrics for every worker of `serve --workers N`. Each worker's admin listener takes a share
 * of the scrapes (they share its port), so a worker asked for /metrics asks the cluster primary,
 * which gathers every worker's registry (prom-client's AggregatorRegistry: counters, histograms
 * and gauges summed, process metrics by their own aggregators) and answers with the text.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { GatewayMetrics } from './metrics.js';

const GATHER = 'rowgate:metrics-gather';
const GATHERED = 'rowgate:metrics-gathered';

/** How long a worker waits for the primary (which waits up to 5 s for the workers). */
const GATHER_TIMEOUT_MS = 10_000;

interface GatherMessage {
  readonly type: typeof GATHER;
  readonly id: number;
}

interface GatheredMessage {
  readonly type: typeof GATHERED;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** In the primary: answers each worker's request with the sum over every worker. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: GatherMessage | undefined) => {
    if (message?.type !== GATHER) return;
    const reply = (answer: Omit<GatheredMessage, 'type' | 'id'>): void => {
      if (worker.isConnected()) worker.send({ type: GATHERED, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (e: unknown) => reply({ error: `gathering the workers' metrics failed: ${(e as Error).message}` }),
    );
  });
}

/** In a worker: its registry answers the primary, and its /metrics asks the primary for the sum. */
export function joinClusterMetrics(metrics: GatewayMetrics): void {
  AggregatorRegistry.setRegistries([metrics.registry]);
  // Constructing one installs prom-client's listener for the primary's requests.
  new AggregatorRegistry();
  const waiting = new Map<number, { resolve(text: string): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  process.on('message', (message: GatheredMessage | undefined) => {
    if (message?.type !== GATHERED) return;
    const w = waiting.get(message.id);
    if (w === undefined) return;
    waiting.delete(message.id);
    clearTimeout(w.timer);
    if (message.text !== undefined) w.resolve(message.text);
    else w.reject(new Error(message.error ?? 'no answer'));
  });
  metrics.gatherWith(
    () =>
      new Promise<string>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the cluster primary did not answer within ${GATHER_TIMEOUT_MS} ms`));
        }, GATHER_TIMEOUT_MS);
        timer.unref();
        waiting.set(id, { resolve, reject, timer });
        process.send!({ type: GATHER, id } satisfies GatherMessage);
      }),
  );
}
