/**
 * Entity ids as clients write them (per revision: docs/interface.md, "Entity ids"), resolved to
 * row keys, and row keys written back as entity ids (revision 3 JSON, revision 1/2 shell strings).
 */
import { isUtf8 } from 'node:buffer';
import { rgError } from '../../errors.js';
import { fromHex, fromStringBinary, quoteInput, toHex, toStringBinary } from './binary-text.js';
import { parseComponentsJson, type ParsedComponent } from './component-json.js';
import { componentsToJson, decodeRowKey, describeValue, encodeRowKey } from './row-key.js';
import { WILDCARD, type ComponentValue, type EntityIdInput, type JsonValue, type RowKeyFormat } from '../types.js';
import { isInt64 } from '../cells/int64.js';

export { compileWildcard, type CompiledWildcard } from './wildcard.js';

const ROW_KEY_PREFIXES = [
  ['rowkey_hex=', 'hex'],
  ['hbase_hex=', 'hex'],
  ['rowkey=', 'escaped'],
  ['hbase=', 'escaped'],
] as const;

/** The revision 3 row key forms, or undefined when `text` is not one of them. */
function parseRowKeyForm(text: string): EntityIdInput | undefined {
  for (const [prefix, kind] of ROW_KEY_PREFIXES) {
    if (!text.startsWith(prefix)) continue;
    const rest = text.slice(prefix.length);
    const name = prefix.slice(0, -1);
    if (rest.length === 0) throw rgError('RG_ERR_BAD_ROW_KEY', `entity id ${quoteInput(text)} has an empty row key after ${prefix}`);
    const rowKey = kind === 'hex' ? fromHex(rest, name) : fromStringBinary(rest, name);
    return { kind: 'rowKey', rowKey, text };
  }
  return undefined;
}

/**
 * Revision 3 URL entity id (`eid`, `start_eid`, `end_eid`, `eids` elements): a JSON array
 * (single quotes allowed) or rowkey= / rowkey_hex= (aliases hbase= / hbase_hex=).
 */
export function parseEntityIdText(text: string, opts: { allowWildcards: boolean }): EntityIdInput {
  const rowKey = parseRowKeyForm(text);
  if (rowKey) return rowKey;
  if (text.trimStart()[0] !== '[') {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `Provide components wrapped as a JSON array or provide the row key (rowkey=... or rowkey_hex=...): got ${quoteInput(text)}`,
    );
  }
  const { items } = parseComponentsJson(text, 'entity id', opts.allowWildcards);
  return { kind: 'components', components: items, text };
}

/** Percent-decoding to bytes (`url:` spec of the shell syntax; `+` is a space as in Java's URLDecoder). */
function percentDecode(text: string, original: string): Buffer {
  const parts: Buffer[] = [];
  let chunk = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '%' && c !== '+') continue;
    parts.push(Buffer.from(text.slice(chunk, i), 'utf8'));
    if (c === '+') {
      parts.push(Buffer.from(' '));
    } else {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex))
        throw rgError('RG_ERR_BAD_ROW_KEY', `entity id ${quoteInput(original)}: % at position ${i} of the url: spec is not followed by two hex digits`);
      parts.push(Buffer.from(hex, 'hex'));
      i += 2;
    }
    chunk = i + 1;
  }
  parts.push(Buffer.from(text.slice(chunk), 'utf8'));
  return Buffer.concat(parts);
}

/**
 * Key bytes of the shell `hbase=`/RAW spec: `hex:`, `url:`, `utf8:` (literal) or, by default,
 * UTF-8, except that text with a backslash is read as toStringBinary so shell strings we emit
 * (`hbase=\x00...`) parse back to the same key.
 */
function parseBytesSpec(spec: string, original: string): Buffer {
  let key: Buffer;
  if (spec.startsWith('hex:')) key = fromHex(spec.slice(4), 'hex: row key');
  else if (spec.startsWith('url:')) key = percentDecode(spec.slice(4), original);
  else if (spec.startsWith('utf8:')) key = Buffer.from(spec.slice(5), 'utf8');
  else key = spec.includes('\\') ? fromStringBinary(spec, 'escaped row key') : Buffer.from(spec, 'utf8');
  if (key.length === 0) throw rgError('RG_ERR_BAD_ROW_KEY', `entity id ${quoteInput(original)} gives an empty row key`);
  return key;
}

/** A single-string kiji key (HASH, HASH_PREFIX): decoded bytes must be UTF-8 text. */
function kijiKeyText(spec: string, original: string): string {
  if (!spec.includes('\\')) return spec;
  const bytes = fromStringBinary(spec, 'escaped kiji key');
  if (!isUtf8(bytes)) throw rgError('RG_ERR_BAD_ENTITY_ID', `entity id ${quoteInput(original)}: the kiji key of a hashed table must be UTF-8 text`);
  return bytes.toString('utf8');
}

/**
 * Revision 1/2 entity id (`eid`, entityId endpoint, POST `entityId` string), KijiSchema's
 * ToolUtils syntax: `hbase=<spec>`, or an optional `kiji=` then a JSON array or bare primitive
 * (FORMATTED), or the key itself (RAW, HASH, HASH_PREFIX; without kiji= a JSON array or quoted
 * string is parsed as JSON).
 */
export function parseShellEntityId(text: string, format: RowKeyFormat, opts: { allowWildcards: boolean } = { allowWildcards: false }): EntityIdInput {
  if (text.startsWith('hbase=')) return { kind: 'rowKey', rowKey: parseBytesSpec(text.slice(6), text), text };
  const explicit = text.startsWith('kiji=');
  const body = explicit ? text.slice(5) : text;
  const first = body.trimStart()[0];
  // After kiji= a RAW or hashed key is taken as written, so keys starting with [ or a quote round-trip.
  const json = format.encoding === 'FORMATTED' || (!explicit && (first === '[' || first === '"' || first === "'"));
  if (json) {
    const { items } = parseComponentsJson(body, 'entity id', opts.allowWildcards);
    return { kind: 'components', components: items, text };
  }
  // An empty hashed key is legal but must be asked for explicitly (`kiji=`), not by an empty parameter.
  if (text.length === 0) throw rgError('RG_ERR_BAD_ENTITY_ID', 'entity id is empty');
  if (format.encoding === 'RAW') return { kind: 'rowKey', rowKey: parseBytesSpec(body, text), text };
  return { kind: 'components', components: [kijiKeyText(body, text)], text };
}

const BODY_FORMS = 'a JSON array of components or a string starting with rowkey=, rowkey_hex=, hbase= or hbase_hex=';

function bodyComponent(v: JsonValue, index: number, whole: JsonValue[]): ParsedComponent {
  const where = () => `entity id ${jsonForMessage(whole)}: component ${index}`;
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v === 0 ? 0 : v;
    throw rgError('RG_ERR_BAD_ENTITY_ID', `${where()} must be an exact integer, got ${describeValue(v)}`);
  }
  if (typeof v === 'bigint') {
    if (isInt64(v)) return v;
    throw rgError('RG_ERR_BAD_ENTITY_ID', `${where()} is outside the 64-bit range: ${v}`);
  }
  if (Array.isArray(v) && v.length === 0) {
    throw rgError('RG_ERR_WILDCARD_NOT_ALLOWED', `${where()} is a wildcard [], which is not accepted here, only a complete entity id`);
  }
  const kind = Array.isArray(v) ? 'an array' : typeof v === 'boolean' ? `the boolean ${v}` : 'an object';
  throw rgError('RG_ERR_BAD_ENTITY_ID', `${where()} must be a string, an integer or null, got ${kind}`);
}

/** JSON text of a body value for messages (bigints exact). */
function jsonForMessage(v: JsonValue): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
}

/** Revision 3 POST body `entityId`: an array of components, or a row key string form. */
export function entityIdFromBody(value: JsonValue): EntityIdInput {
  if (Array.isArray(value)) {
    if (value.length === 0) throw rgError('RG_ERR_BAD_ENTITY_ID', 'entity id [] has no components');
    const components = value.map((v, i) => bodyComponent(v, i, value));
    return { kind: 'components', components, text: componentsToJson(components) };
  }
  if (typeof value === 'string') {
    const rowKey = parseRowKeyForm(value);
    if (rowKey) return rowKey;
    throw rgError('RG_ERR_BAD_ENTITY_ID', `entityId must be ${BODY_FORMS}; got the string ${quoteInput(value)}`);
  }
  throw rgError('RG_ERR_BAD_ENTITY_ID', `entityId must be ${BODY_FORMS}; got ${jsonForMessage(value)}`);
}

/** Checks a row key given directly against the table's format. */
function checkRowKey(format: RowKeyFormat, rowKey: Buffer): void {
  if (rowKey.length === 0) throw rgError('RG_ERR_BAD_ROW_KEY', 'row key is empty');
  if (format.encoding === 'HASH' && rowKey.length !== 16) {
    throw rgError('RG_ERR_BAD_ROW_KEY', `row key ${toHex(rowKey)} is not a valid HASH key: HASH keys are 16-byte MD5 digests, got ${rowKey.length} bytes`);
  }
  const components = decodeRowKey(format, rowKey); // throws RG_ERR_BAD_ROW_KEY when malformed
  // A key whose hash prefix is not the hash of its components would make a second row that reads
  // back as the same entity id, unreachable by that id: refuse it (the canonical key is named).
  if (components !== undefined && (format.encoding === 'HASH_PREFIX' || (format.encoding === 'FORMATTED' && format.hashSize > 0))) {
    const canonical = encodeRowKey(format, components);
    if (!canonical.equals(rowKey)) {
      throw rgError(
        'RG_ERR_BAD_ROW_KEY',
        `row key ${toHex(rowKey)} does not match its entity id ${componentsToJson(components)}: that entity id's row key is ${toHex(canonical)} (the hash prefix is computed from the components)`,
      );
    }
  }
}

/** The row key an entity id addresses; wildcards are refused (use compileWildcard for scans). */
export function resolveEntityId(format: RowKeyFormat, input: EntityIdInput): Buffer {
  if (input.kind === 'rowKey') {
    checkRowKey(format, input.rowKey);
    return input.rowKey;
  }
  const at = input.components.indexOf(WILDCARD);
  if (at >= 0) {
    throw rgError(
      'RG_ERR_WILDCARD_NOT_ALLOWED',
      `Entity id must be fully specified, without wildcards: ${quoteInput(input.text)} has a wildcard [] at component ${at}`,
    );
  }
  return encodeRowKey(format, input.components as readonly ComponentValue[]);
}

/** Revision 3 `entityId` of a row, as compact JSON text. */
export function formatEntityIdJson(format: RowKeyFormat, rowKey: Buffer): string {
  let components: ComponentValue[] | undefined;
  try {
    components = decodeRowKey(format, rowKey);
  } catch {
    // A row key the format cannot decode (the store takes raw keys, e.g. from rowkey= forms of an
    // earlier release) is named by its bytes, as RAW keys are: its row is still served.
    components = undefined;
  }
  if (components === undefined) return JSON.stringify(`rowkey=${toStringBinary(rowKey)}`);
  return componentsToJson(components);
}

const SHELL_ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/**
 * A string in single quotes as KijiSchema's toShellString writes it (`\`, `'`, `"` escaped);
 * control characters are escaped too, so the text parses back.
 */
function shellString(s: string): string {
  const body = s.replace(/[\\'"\x00-\x1f]/g, (c) => SHELL_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `'${body}'`;
}

/** Revision 1/2 `entityId` of a row: KijiSchema's EntityId.toShellString (docs/data-model.md, "Row keys as text"). */
export function formatShellEntityId(format: RowKeyFormat, rowKey: Buffer): string {
  switch (format.encoding) {
    case 'RAW':
      return `hbase=${toStringBinary(rowKey)}`;
    case 'HASH':
      // The kiji key of a HASH row cannot be recovered from its digest.
      return `hbase=hex:${toHex(rowKey)}`;
    case 'HASH_PREFIX':
      decodeRowKey(format, rowKey);
      return `kiji=${toStringBinary(rowKey.subarray(format.hashSize))}`;
    case 'FORMATTED': {
      const components = decodeRowKey(format, rowKey);
      if (components === undefined) return `hbase=hex:${toHex(rowKey)}`;
      return `[${components.map((c) => (typeof c === 'string' ? shellString(c) : String(c))).join(', ')}]`;
    }
  }
}
