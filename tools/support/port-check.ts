/**
 * Checks that the ports serve will listen on are free before it does anything else: a new data
 * directory would otherwise be seeded with demo data (seconds, and a directory left behind) only
 * for the listen to fail with EADDRINUSE. Ports 0 (any free port) are not checked.
 */
import { createServer } from 'node:net';
import type { Config } from '../../lib/config/config.js';
import { CliError } from './cli-error.js';

function probe(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    // exclusive: a cluster worker would otherwise share the primary's handle rather than bind.
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** Rejects with the system's error (EADDRINUSE, EACCES, EADDRNOTAVAIL) for a port that cannot be bound. */
export async function checkPortsFree(config: Config): Promise<void> {
  if (config.port !== 0) await probe(config.host, config.port);
  if (config.admin !== false && config.admin.port !== 0) {
    try {
      await probe(config.admin.host, config.admin.port);
    } catch (e) {
      // Named, or it reads as the main port's failure (the admin port defaults to the main port + 1).
      throw new CliError(
        `admin listener: ${(e as Error).message} (the admin port: admin.port, else the main port + 1); move it with --admin-port N (or ROWGATE_ADMIN_PORT, admin.port), or turn it off with admin: false`,
      );
    }
  }
}
