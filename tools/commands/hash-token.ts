/**
 * `rowgate hash-token [TOKEN]`: prints the SHA-256 (hex) of a bearer token, the value that goes
 * into the configuration as `auth.tokens[].sha256`. Without an argument the token is read from
 * standard input (one line), so it need not appear in the shell history; `--generate` makes a
 * random one and prints both.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { sha256Hex } from '../../lib/http/auth.js';
import { CliError, EXIT_USAGE } from '../support/cli-error.js';

interface HashTokenFlags {
  readonly generate?: boolean;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function registerHashToken(program: Command): void {
  program
    .command('hash-token')
    .description('print the SHA-256 of a bearer token for auth.tokens[].sha256 (token from the argument or stdin)')
    .argument('[token]', 'the token (default: read one line from stdin)')
    .option('--generate', 'make a random token and print it with its hash')
    .action(async (token: string | undefined, flags: HashTokenFlags) => {
      if (flags.generate) {
        if (token !== undefined) throw new CliError('give either a token or --generate, not both', EXIT_USAGE);
        const made = randomBytes(32).toString('base64url');
        process.stdout.write(`token:  ${made}\nsha256: ${sha256Hex(made)}\n`);
        return;
      }
      const text = token ?? (await readStdin());
      if (text === '' || /\s/.test(text)) throw new CliError('a token must be non-empty and contain no whitespace', EXIT_USAGE);
      process.stdout.write(`${sha256Hex(text)}\n`);
    });
}
