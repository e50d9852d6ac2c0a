/** Kiji name rules (docs/data-model.md, "Names and ids") and a helper for "unique among names and aliases". */
import { badLayout } from './layout-error.js';

/** Table, locality group, family, column and row key component names. */
const NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const ALIAS = /^[a-zA-Z0-9_-]+$/;
/**
 * Longest name: names become parts of store keys (LMDB keys stop at 1978 bytes, Bigtable row keys
 * at 4 KiB), and HBase, where Kiji names lived, limited table names to 255 characters too.
 */
export const MAX_NAME_CHARS = 255;

export function checkName(name: string, path: string, what: string): void {
  if (!NAME.test(name)) throw badLayout(path, `${what} name "${name}" is invalid: it must match [a-zA-Z_][a-zA-Z0-9_]*`);
  if (name.length > MAX_NAME_CHARS) throw badLayout(path, `${what} name is ${name.length} characters long; at most ${MAX_NAME_CHARS} are allowed`);
}

export function checkAlias(alias: string, path: string): void {
  if (!ALIAS.test(alias)) throw badLayout(path, `alias "${alias}" is invalid: it must match [a-zA-Z0-9_-]+`);
  if (alias.length > MAX_NAME_CHARS) throw badLayout(path, `alias is ${alias.length} characters long; at most ${MAX_NAME_CHARS} are allowed`);
}

/** Names and aliases in one scope; the second use of a name fails, naming where it was first used. */
export class NameScope {
  private readonly seen = new Map<string, string>();

  constructor(private readonly what: string) {}

  add(name: string, path: string): void {
    const first = this.seen.get(name);
    if (first !== undefined) throw badLayout(path, `"${name}" is already used as a ${this.what} name or alias at ${first}`);
    this.seen.set(name, path);
  }
}
