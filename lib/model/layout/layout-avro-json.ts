/**
 * Strict decoding of layout JSON against the avdl description, as Kiji's FromJson does it
 * (docs/data-model.md, "Layout JSON"): missing fields take their default or fail, unknown fields fail,
 * unions accept null, the wrapped `{"<type name>": value}` form, or the bare value (branches tried
 * in declaration order). And the reverse: the Avro JSON encoding KijiREST served (all fields,
 * every non-null union value wrapped).
 */
import { isRowgateError } from '../../errors.js';
import { NAMESPACE, type AvdlType, type RecordType, type UnionType } from './layout-avdl.js';
import { badLayout, fieldPath, show } from './layout-error.js';

/** A decoded value of a union with several non-null branches (keys_format): remembers the branch. */
export class Tagged {
  constructor(
    readonly branch: string,
    readonly value: unknown,
  ) {}
}

/** The name a union branch is wrapped with in Avro JSON. */
export function typeName(type: AvdlType): string {
  if (typeof type === 'string') return type;
  if (type.kind === 'array') return 'array';
  if (type.kind === 'union') throw new Error('a union cannot be a union branch');
  return NAMESPACE + type.name;
}

function isObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

function decodeInteger(json: unknown, path: string, int: boolean): number {
  // Objects from the exact-JSON parser carry large integers as bigint; compare those exactly.
  const isInt = typeof json === 'bigint' || (typeof json === 'number' && Number.isInteger(json));
  if (!isInt) throw badLayout(path, `must be an integer, got ${show(json)}`);
  const n = json as number | bigint;
  if (int && (n < INT_MIN || n > INT_MAX)) throw badLayout(path, `must be a 32-bit integer, got ${show(json)}`);
  if (n < Number.MIN_SAFE_INTEGER || n > Number.MAX_SAFE_INTEGER) {
    throw badLayout(path, `is out of range (at most ${Number.MAX_SAFE_INTEGER} in magnitude), got ${show(json)}`);
  }
  return Number(n);
}

function decodePrimitive(json: unknown, type: string, path: string): unknown {
  switch (type) {
    case 'null':
      if (json !== null) throw badLayout(path, `must be null, got ${show(json)}`);
      return null;
    case 'boolean':
      if (typeof json !== 'boolean') throw badLayout(path, `must be true or false, got ${show(json)}`);
      return json;
    case 'string':
      if (typeof json !== 'string') throw badLayout(path, `must be a string, got ${show(json)}`);
      return json;
    case 'int':
      return decodeInteger(json, path, true);
    default:
      return decodeInteger(json, path, false);
  }
}

function decodeRecord(json: unknown, type: RecordType, path: string): Record<string, unknown> {
  if (!isObject(json)) throw badLayout(path, `must be a JSON object (a ${type.name} record), got ${show(json)}`);
  const known = new Set(type.fields.map((f) => f.name));
  for (const key of Object.keys(json)) {
    if (!known.has(key)) {
      throw badLayout(fieldPath(path, key), `unknown field (a ${type.name} has: ${[...known].join(', ')})`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const field of type.fields) {
    const p = fieldPath(path, field.name);
    if (Object.prototype.hasOwnProperty.call(json, field.name)) out[field.name] = decode(json[field.name], field.type, p);
    else if ('default' in field) out[field.name] = structuredClone(field.default);
    else throw badLayout(p, 'required field is missing');
  }
  return out;
}

function shortName(type: AvdlType): string {
  return typeof type === 'object' && type.kind === 'record' ? type.name : typeName(type);
}

function decodeUnion(json: unknown, type: UnionType, path: string): unknown {
  const nonNull = type.branches.filter((b) => b !== 'null');
  const tag = (branch: AvdlType, value: unknown): unknown => (nonNull.length > 1 ? new Tagged(typeName(branch), value) : value);
  if (json === null && type.branches.includes('null')) return null;
  if (isObject(json)) {
    const keys = Object.keys(json);
    const wrapped = keys.length === 1 ? nonNull.find((b) => typeName(b) === keys[0]) : undefined;
    if (wrapped !== undefined) return tag(wrapped, decode(json[keys[0]!], wrapped, path));
  }
  if (nonNull.length === 1) return decode(json, nonNull[0]!, path);
  const failures: string[] = [];
  for (const branch of nonNull) {
    try {
      return tag(branch, decode(json, branch, path));
    } catch (e) {
      if (!isRowgateError(e)) throw e;
      failures.push(`not a ${shortName(branch)} (${e.message})`);
    }
  }
  throw badLayout(path, failures.join(', and '));
}

/** Decodes `json` as `type`; throws RG_ERR_BAD_LAYOUT naming the path of the first bad field. */
export function decode(json: unknown, type: AvdlType, path: string): unknown {
  if (typeof type === 'string') return decodePrimitive(json, type, path);
  switch (type.kind) {
    case 'enum':
      if (typeof json !== 'string' || !type.symbols.includes(json)) {
        throw badLayout(path, `must be one of ${type.symbols.map((s) => `"${s}"`).join(', ')}, got ${show(json)}`);
      }
      return json;
    case 'array':
      if (!Array.isArray(json)) throw badLayout(path, `must be an array, got ${show(json)}`);
      return json.map((item, i) => decode(item, type.items, `${path}[${i}]`));
    case 'record':
      return decodeRecord(json, type, path);
    case 'union':
      return decodeUnion(json, type, path);
  }
}

/** Encodes a decoded value in the Avro JSON encoding (every field present, unions wrapped). */
export function encode(value: unknown, type: AvdlType): unknown {
  if (typeof type === 'string') return value;
  switch (type.kind) {
    case 'enum':
      return value;
    case 'array':
      return (value as unknown[]).map((item) => encode(item, type.items));
    case 'record': {
      const rec = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const field of type.fields) out[field.name] = encode(rec[field.name], field.type);
      return out;
    }
    case 'union': {
      if (value === null) return null;
      const nonNull = type.branches.filter((b) => b !== 'null');
      const branch = value instanceof Tagged ? nonNull.find((b) => typeName(b) === value.branch) : nonNull[0];
      if (branch === undefined) throw new Error('union value matches no branch');
      const inner = value instanceof Tagged ? value.value : value;
      return { [typeName(branch)]: encode(inner, branch) };
    }
  }
}
