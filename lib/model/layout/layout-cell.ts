/**
 * Cell schemas (docs/data-model.md, "Cell schemas"): version gates, storage rules, Avro schema
 * checks with avsc, and conversion to CellSchemaSpec. CLASS and PROTOBUF cells are refused: they
 * name Java / protobuf classes that a Node process cannot load (the message says what to declare instead).
 */
import avro from 'avsc';
import type { AvroSchemaRef, CellSchemaSpec } from '../types.js';
import type { AvroSchemaRec, CellSchemaRec } from './layout-avdl.js';
import { badLayout, fieldPath } from './layout-error.js';
import { requireVersion, type LayoutVersion } from './layout-version.js';

/** Throws unless `text` is JSON text of an Avro schema avsc can build. */
export function checkAvroSchemaText(text: string, path: string): void {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    throw badLayout(path, `is not an Avro schema: not valid JSON text (${(e as Error).message}); a string schema is written '"string"'`);
  }
  try {
    avro.Type.forSchema(schema as avro.Schema);
  } catch (e) {
    throw badLayout(path, `is not a valid Avro schema: ${(e as Error).message}`);
  }
}

function checkSchemaRef(ref: AvroSchemaRec, path: string): void {
  if ((ref.uid === null) === (ref.json === null)) throw badLayout(path, 'exactly one of uid and json must be set');
  if (ref.uid !== null && ref.uid < 0) throw badLayout(fieldPath(path, 'uid'), `must be a schema id >= 0, got ${ref.uid}`);
  if (ref.json !== null) checkAvroSchemaText(ref.json, fieldPath(path, 'json'));
}

export function checkCellSchema(cs: CellSchemaRec, version: LayoutVersion, path: string): void {
  const typePath = fieldPath(path, 'type');
  if (cs.type === 'AVRO' || cs.type === 'RAW_BYTES') requireVersion(version, [1, 3, 0], typePath, `cell type ${cs.type}`);
  if (cs.type === 'PROTOBUF') requireVersion(version, [1, 4, 0], typePath, 'cell type PROTOBUF');
  if (cs.type === 'CLASS') {
    throw badLayout(
      typePath,
      `CLASS cells are not supported: rowgate cannot load Java classes (${cs.value ?? 'no class named'}); declare the column INLINE with the record's Avro schema as value, or AVRO with a default_reader`,
    );
  }
  if (cs.type === 'PROTOBUF') {
    throw badLayout(
      typePath,
      `PROTOBUF cells are not supported: rowgate cannot load protobuf classes (${cs.protobuf_class_name ?? cs.protobuf_full_name ?? 'no class named'})`,
    );
  }
  const storagePath = fieldPath(path, 'storage');
  if (cs.type === 'COUNTER' && cs.storage !== 'FINAL') {
    throw badLayout(
      storagePath,
      `COUNTER cells require storage "FINAL", got "${cs.storage}" (storage defaults to "HASH"; write {type: "COUNTER", storage: "FINAL"})`,
    );
  }
  if (cs.storage === 'FINAL' && cs.type !== 'INLINE' && cs.type !== 'COUNTER') {
    throw badLayout(storagePath, `storage "FINAL" is only allowed for INLINE and COUNTER cells, not ${cs.type}`);
  }
  if (cs.type === 'INLINE') {
    if (cs.value === null) throw badLayout(fieldPath(path, 'value'), 'INLINE cells need an Avro schema as value, e.g. \'"string"\'');
    checkAvroSchemaText(cs.value, fieldPath(path, 'value'));
  }
  if (cs.default_reader !== null) checkSchemaRef(cs.default_reader, fieldPath(path, 'default_reader'));
  for (const list of ['readers', 'written', 'writers'] as const) {
    cs[list]?.forEach((ref, i) => checkSchemaRef(ref, `${fieldPath(path, list)}[${i}]`));
  }
}

/** Kiji stores AVRO cells with the schema lists as arrays, never null (3.2). */
export function normalizeCellSchema(cs: CellSchemaRec): void {
  if (cs.type !== 'AVRO') return;
  cs.readers ??= [];
  cs.written ??= [];
  cs.writers ??= [];
}

function toRef(ref: AvroSchemaRec): AvroSchemaRef {
  return ref.uid !== null ? { uid: ref.uid } : { json: ref.json! };
}

export function toCellSpec(cs: CellSchemaRec): CellSchemaSpec {
  return {
    type: cs.type,
    storage: cs.storage,
    ...(cs.type === 'INLINE' && cs.value !== null ? { value: cs.value } : {}),
    avroValidationPolicy: cs.avro_validation_policy,
    ...(cs.default_reader !== null ? { defaultReader: toRef(cs.default_reader) } : {}),
    readers: (cs.readers ?? []).map(toRef),
    writers: (cs.writers ?? []).map(toRef),
  };
}
