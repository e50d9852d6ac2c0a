/**
 * Settings from the environment, for containers (docs/configuration.md, "Environment variables"). One precedence for
 * every setting: command-line flags > environment > configuration file > defaults. An empty
 * variable counts as unset (container templates often leave them empty). Read: ROWGATE_CONFIG,
 * ROWGATE_DATA, ROWGATE_HOST, ROWGATE_PORT (over PORT), ROWGATE_ADMIN_PORT, ROWGATE_LOG_LEVEL. ROWGATE_TOKEN is the
 * bearer token of the command line's remote mode (tools/support/remote.ts); the gateway does not read it.
 */
import { rgError } from '../errors.js';

/** Flags given on the command line, or taken from the environment (flagsFromEnvironment); undefined = not given. */
export interface ConfigFlags {
  readonly config?: string;
  readonly data?: string;
  readonly port?: string | number;
  readonly host?: string;
  readonly revision?: string | number;
  readonly logLevel?: string;
  /** The admin listener's port (--admin-port, ROWGATE_ADMIN_PORT), over admin.port. */
  readonly adminPort?: string | number;
}

export const LOG_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export type Environment = Readonly<Record<string, string | undefined>>;

function bad(name: string, message: string): never {
  throw rgError('RG_ERR_BAD_CONFIG', `environment ${name}: ${message}`);
}

function value(env: Environment, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** The flags the environment gives (checked here, so a bad value names its variable). */
export function flagsFromEnvironment(env: Environment): ConfigFlags {
  // ROWGATE_PORT is rowgate's own; PORT is what platforms (Heroku, Cloud Run) set for any server.
  const portName = value(env, 'ROWGATE_PORT') !== undefined ? 'ROWGATE_PORT' : 'PORT';
  const port = value(env, portName);
  if (port !== undefined && !(/^\d+$/.test(port) && Number(port) <= 65535)) bad(portName, `must be an integer from 0 to 65535, got ${JSON.stringify(port)}`);
  const logLevel = value(env, 'ROWGATE_LOG_LEVEL');
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel))
    bad('ROWGATE_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
  const adminPort = value(env, 'ROWGATE_ADMIN_PORT');
  if (adminPort !== undefined && !(/^\d+$/.test(adminPort) && Number(adminPort) <= 65535))
    bad('ROWGATE_ADMIN_PORT', `must be an integer from 0 to 65535, got ${JSON.stringify(adminPort)}`);
  return {
    adminPort,
    config: value(env, 'ROWGATE_CONFIG'),
    data: value(env, 'ROWGATE_DATA'),
    host: value(env, 'ROWGATE_HOST'),
    port,
    logLevel,
  };
}

/** `flags` with what they leave unset taken from the environment (flags win). */
export function withEnvironment(flags: ConfigFlags, env: Environment): ConfigFlags {
  const fromEnv = flagsFromEnvironment(env);
  const out: Record<string, unknown> = { ...fromEnv };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) out[k] = v;
  return out as ConfigFlags;
}
