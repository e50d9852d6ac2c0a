/** Kiji name rules (kiji-data-model.md 3.4) and a helper for "unique among names and aliases". */
import { badLayout } from './layout-error.js';

/** Table, locality group, family, column and row key component names. */
const NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const ALIAS = /^[a-zA-Z0-9_-]+$/;

export function checkName(name: string, path: string, what: string): void {
  if (!NAME.test(name)) throw badLayout(path, `${what} name "${name}" is invalid: it must match [a-zA-Z_][a-zA-Z0-9_]*`);
}

export function checkAlias(alias: string, path: string): void {
  if (!ALIAS.test(alias)) throw badLayout(path, `alias "${alias}" is invalid: it must match [a-zA-Z0-9_-]+`);
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
