/**
 * Avro JSON encoding <-> avsc in-memory values (types from avro-types.ts: bigint longs, wrapped
 * unions). Reading validates as it goes and reports the first mismatch with its path; rendering
 * writes compact JSON text directly, so stored cells never need Avro decoding on reads.
 * Each avsc Type is compiled once into a Shape: avsc's getters (branchName...) are slow.
 */

import type { AvroType } from './avro-types.js';
import { isInt64 } from '../cells/int64.js';
import type { JsonValue } from '../types.js';
import { jsonForMessage } from '../json/exact-json.js';

/** A value that does not match its schema; `path` leads from the top value to the bad part. */
export class AvroValueMismatch extends Error {
  readonly path: string[] = [];
  constructor(
    readonly expected: string,
    readonly got: JsonValue | undefined,
  ) {
    super(`expected ${expected}`);
  }

  /** "at .team.name: expected ..., got 12" */
  describe(): string {
    const where = this.path.length ? `at ${this.path.join('')}: ` : '';
    const got = this.got === undefined ? 'nothing' : snippet(this.got);
    return `${where}expected ${this.expected}, got ${got}`;
  }
}

function snippet(v: JsonValue): string {
  const text = jsonForMessage(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Adds `segment` in front of a mismatch's path on its way up. */
function prefixed(e: unknown, segment: string): unknown {
  if (e instanceof AvroValueMismatch) e.path.unshift(segment);
  return e;
}

// ---------------------------------------------------------------- shapes

interface Field {
  readonly name: string;
  /** `"name":` ready for output. */
  readonly key: string;
  readonly shape: Shape;
  /** The avsc default (in-memory form), undefined when the field has none. */
  readonly dflt: () => unknown;
}

interface Branch {
  /** The union key: the full name of named types, else the type name. */
  readonly name: string;
  readonly key: string;
  readonly shape: Shape;
}

type Shape =
  | { readonly kind: 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'string' | 'bytes'; readonly desc: string }
  | { readonly kind: 'enum'; readonly desc: string; readonly symbols: ReadonlySet<string> }
  | { readonly kind: 'fixed'; readonly desc: string; readonly size: number }
  | { readonly kind: 'array'; readonly desc: string; items: Shape }
  | { readonly kind: 'map'; readonly desc: string; values: Shape }
  | { readonly kind: 'record'; readonly desc: string; fields: Field[]; names: Set<string> }
  | { readonly kind: 'union'; readonly desc: string; branches: Branch[]; byName: Map<string, Branch>; nullable: boolean };

type AvscInternals = AvroType & {
  types: AvroType[];
  symbols: string[];
  size: number;
  itemsType: AvroType;
  valuesType: AvroType;
  fields: { name: string; type: AvroType; defaultValue(): unknown }[];
};

const shapes = new WeakMap<AvroType, Shape>();

function shapeOf(type: AvroType): Shape {
  const known = shapes.get(type);
  if (known !== undefined) return known;
  const t = type as AvscInternals;
  const typeName = type.typeName;
  let shape: Shape;
  switch (typeName) {
    case 'null':
    case 'boolean':
    case 'int':
    case 'float':
    case 'double':
    case 'string':
    case 'bytes':
      shape = { kind: typeName, desc: typeName };
      break;
    case 'abstract:long':
      shape = { kind: 'long', desc: 'long' };
      break;
    case 'enum':
      shape = { kind: 'enum', desc: `enum ${type.name} (one of ${t.symbols.join(', ')})`, symbols: new Set(t.symbols) };
      break;
    case 'fixed':
      shape = { kind: 'fixed', desc: `fixed ${type.name} (${t.size} bytes)`, size: t.size };
      break;
    case 'array':
    case 'map':
    case 'record':
    case 'error':
    case 'union:wrapped':
      // Registered before its parts: named types may refer to themselves.
      return compileComposite(type, t);
    default:
      throw new Error(`unsupported Avro type ${typeName}`);
  }
  shapes.set(type, shape);
  return shape;
}

function compileComposite(type: AvroType, t: AvscInternals): Shape {
  switch (type.typeName) {
    case 'array': {
      const shape = { kind: 'array' as const, desc: 'array', items: undefined as unknown as Shape };
      shapes.set(type, shape);
      shape.items = shapeOf(t.itemsType);
      return shape;
    }
    case 'map': {
      const shape = { kind: 'map' as const, desc: 'map', values: undefined as unknown as Shape };
      shapes.set(type, shape);
      shape.values = shapeOf(t.valuesType);
      return shape;
    }
    case 'union:wrapped': {
      const shape = { kind: 'union' as const, desc: '', branches: [] as Branch[], byName: new Map<string, Branch>(), nullable: false };
      shapes.set(type, shape);
      for (const b of t.types) {
        const name = b.branchName as string;
        const branch = { name, key: JSON.stringify(name), shape: shapeOf(b) };
        shape.branches.push(branch);
        shape.byName.set(name, branch);
        if (branch.shape.kind === 'null') shape.nullable = true;
      }
      // A named branch may also be given by its short name when no other branch has it.
      for (const b of shape.branches) {
        const short = b.name.slice(b.name.lastIndexOf('.') + 1);
        if (short !== b.name && !shape.byName.has(short) && shape.branches.filter((o) => o.name.endsWith(`.${short}`)).length === 1) {
          shape.byName.set(short, b);
        }
      }
      shape.desc = `union [${shape.branches.map((b) => b.name).join(', ')}]`;
      return shape;
    }
    default: {
      const shape = { kind: 'record' as const, desc: `record ${type.name}`, fields: [] as Field[], names: new Set<string>() };
      shapes.set(type, shape);
      for (const f of t.fields) {
        shape.fields.push({ name: f.name, key: `${JSON.stringify(f.name)}:`, shape: shapeOf(f.type), dflt: () => f.defaultValue() });
        shape.names.add(f.name);
      }
      return shape;
    }
  }
}

/** A short human name of a type for messages. */
export function describeType(type: AvroType): string {
  return shapeOf(type).desc;
}

// ---------------------------------------------------------------- JSON -> in-memory

type Obj = { [key: string]: JsonValue };

function isObject(v: JsonValue | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets `key` as an own property even when it is "__proto__". */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Avro JSON encodes bytes and fixed as a string of code points 0-255, one per byte. */
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Reads a value given in the Avro JSON encoding of `type`. At the top level (`top`) a union
 * value may also be given bare (the original gateway accepted that); nested unions are wrapped.
 * Record fields left out take their schema default; unknown fields are refused.
 */
export function avroFromJson(type: AvroType, json: JsonValue | undefined, top = false): unknown {
  const shape = shapeOf(type);
  if (top && shape.kind === 'union') return topUnionFromJson(shape, json);
  return fromJson(shape, json);
}

function fromJson(shape: Shape, json: JsonValue | undefined): unknown {
  switch (shape.kind) {
    case 'null':
      if (json === null) return null;
      break;
    case 'boolean':
      if (typeof json === 'boolean') return json;
      break;
    case 'int':
      if (typeof json === 'number' && Number.isInteger(json) && json >= -2147483648 && json <= 2147483647) return json;
      break;
    case 'long': {
      const n = typeof json === 'bigint' ? json : typeof json === 'number' && Number.isInteger(json) ? BigInt(json) : undefined;
      if (n !== undefined && isInt64(n)) return n;
      break;
    }
    case 'float': {
      const n = typeof json === 'number' ? Math.fround(json) : typeof json === 'bigint' ? Math.fround(Number(json)) : NaN;
      if (Number.isFinite(n)) return n;
      break;
    }
    case 'double': {
      const n = typeof json === 'number' ? json : typeof json === 'bigint' ? Number(json) : NaN;
      if (Number.isFinite(n)) return n;
      break;
    }
    case 'string':
      if (typeof json === 'string') return json;
      break;
    case 'bytes':
      if (typeof json === 'string' && !NOT_LATIN1.test(json)) return Buffer.from(json, 'latin1');
      break;
    case 'fixed':
      if (typeof json === 'string' && json.length === shape.size && !NOT_LATIN1.test(json)) return Buffer.from(json, 'latin1');
      break;
    case 'enum':
      if (typeof json === 'string' && shape.symbols.has(json)) return json;
      break;
    case 'array':
      if (Array.isArray(json)) {
        const out = new Array<unknown>(json.length);
        for (let i = 0; i < json.length; i++) {
          try {
            out[i] = fromJson(shape.items, json[i]);
          } catch (e) {
            throw prefixed(e, `[${i}]`);
          }
        }
        return out;
      }
      break;
    case 'map':
      if (isObject(json)) {
        const out: Record<string, unknown> = {};
        for (const key of Object.keys(json)) {
          try {
            setOwn(out, key, fromJson(shape.values, json[key]));
          } catch (e) {
            throw prefixed(e, `[${JSON.stringify(key)}]`);
          }
        }
        return out;
      }
      break;
    case 'record':
      if (isObject(json)) return recordFromJson(shape, json);
      break;
    case 'union':
      return wrappedUnionFromJson(shape, json);
  }
  throw new AvroValueMismatch(shape.desc, json);
}

function recordFromJson(shape: Extract<Shape, { kind: 'record' }>, json: Obj): unknown {
  const out: Record<string, unknown> = {};
  let seen = 0;
  for (const field of shape.fields) {
    const v = json[field.name];
    if (v !== undefined && Object.prototype.hasOwnProperty.call(json, field.name)) {
      seen++;
      try {
        setOwn(out, field.name, fromJson(field.shape, v));
      } catch (e) {
        throw prefixed(e, `.${field.name}`);
      }
    } else {
      const dflt = field.dflt();
      if (dflt === undefined) throw prefixed(new AvroValueMismatch(field.shape.desc, undefined), `.${field.name}`);
      setOwn(out, field.name, dflt);
    }
  }
  if (seen < Object.keys(json).length) {
    const extra = Object.keys(json).find((k) => !shape.names.has(k)) as string;
    throw new AvroValueMismatch(`${shape.desc} without a field named ${JSON.stringify(extra)}`, json);
  }
  return out;
}

function wrap(branch: Branch, value: unknown): unknown {
  if (branch.shape.kind === 'null') return null;
  const out: Record<string, unknown> = {};
  setOwn(out, branch.name, value);
  return out;
}

/** The single key of a one-key object, else undefined. */
function soleKey(obj: Obj): string | undefined {
  let key: string | undefined;
  for (const k in obj) {
    if (key !== undefined) return undefined;
    key = k;
  }
  return key;
}

function wrappedUnionFromJson(shape: Extract<Shape, { kind: 'union' }>, json: JsonValue | undefined): unknown {
  if (json === null) {
    if (shape.nullable) return null;
  } else if (isObject(json)) {
    const key = soleKey(json);
    const branch = key === undefined ? undefined : shape.byName.get(key);
    if (branch !== undefined && branch.shape.kind !== 'null') {
      try {
        return wrap(branch, fromJson(branch.shape, json[key as string]));
      } catch (e) {
        throw prefixed(e, `.${key}`);
      }
    }
  }
  throw new AvroValueMismatch(`${shape.desc} as null or {"<branch>": value}`, json);
}

/** Top-level union: the wrapped form when it fits, else the first branch that takes the bare value. */
function topUnionFromJson(shape: Extract<Shape, { kind: 'union' }>, json: JsonValue | undefined): unknown {
  if (isObject(json)) {
    const key = soleKey(json);
    const branch = key === undefined ? undefined : shape.byName.get(key);
    if (branch !== undefined && branch.shape.kind !== 'null') {
      try {
        return wrap(branch, fromJson(branch.shape, json[key as string]));
      } catch (e) {
        if (!(e instanceof AvroValueMismatch)) throw e;
      }
    }
  }
  for (const branch of shape.branches) {
    try {
      return wrap(branch, fromJson(branch.shape, json));
    } catch (e) {
      if (!(e instanceof AvroValueMismatch)) throw e;
    }
  }
  throw new AvroValueMismatch(`a value of one of the branches of ${shape.desc}`, json);
}

// ---------------------------------------------------------------- in-memory -> JSON text

/**
 * Renders an in-memory value as compact Avro JSON text. At the top level (`top`) a union renders
 * as its bare branch value, as the original gateway did; nested unions are wrapped.
 */
export function avroToJson(type: AvroType, value: unknown, top = false): string {
  const shape = shapeOf(type);
  if (top && shape.kind === 'union') {
    if (value === null) return 'null';
    const branch = branchOf(shape, value);
    return toJson(branch.shape, (value as Record<string, unknown>)[branch.name]);
  }
  return toJson(shape, value);
}

function branchOf(shape: Extract<Shape, { kind: 'union' }>, value: unknown): Branch {
  // Our wrapped objects and avsc's Branch instances both hold exactly one own key.
  const name = soleKey(value as Obj) ?? Object.keys(value as object)[0];
  const branch = shape.byName.get(name);
  if (branch === undefined) throw new Error(`no branch ${name} in ${shape.desc}`);
  return branch;
}

function toJson(shape: Shape, value: unknown): string {
  switch (shape.kind) {
    case 'null':
      return 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'int':
    case 'long':
      // A long can arrive as a number when avsc promotes it; both print exactly.
      return String(value);
    case 'float':
      return floatText(Number(value));
    case 'double': {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new Error(`non-finite double ${n}`);
      return String(n);
    }
    case 'string':
    case 'enum':
      return JSON.stringify(value);
    case 'bytes':
    case 'fixed':
      return JSON.stringify((value as Buffer).toString('latin1'));
    case 'array': {
      const items = value as unknown[];
      let out = '[';
      for (let i = 0; i < items.length; i++) out += (i ? ',' : '') + toJson(shape.items, items[i]);
      return `${out}]`;
    }
    case 'map': {
      const obj = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const key of Object.keys(obj)) {
        out += `${first ? '' : ','}${JSON.stringify(key)}:${toJson(shape.values, obj[key])}`;
        first = false;
      }
      return `${out}}`;
    }
    case 'record': {
      const obj = value as Record<string, unknown>;
      let out = '{';
      for (let i = 0; i < shape.fields.length; i++) {
        const f = shape.fields[i];
        out += (i ? ',' : '') + f.key + toJson(f.shape, obj[f.name]);
      }
      return `${out}}`;
    }
    case 'union': {
      if (value === null) return 'null';
      const branch = branchOf(shape, value);
      return `{${branch.key}:${toJson(branch.shape, (value as Record<string, unknown>)[branch.name])}}`;
    }
  }
}

/** The shortest decimal that reads back as the same 32-bit float (0.1, not 0.10000000149011612). */
export function floatText(f: number): string {
  if (!Number.isFinite(f)) throw new Error(`non-finite float ${f}`);
  for (let digits = 1; digits < 9; digits++) {
    const n = Number(f.toPrecision(digits));
    if (Math.fround(n) === f) return String(n);
  }
  return String(f);
}
