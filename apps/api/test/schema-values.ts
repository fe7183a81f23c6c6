import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * Values for the schema-driven fuzzer: what a schema allows (boundaries of its lengths and ranges,
 * each enum value, strings that match its pattern) and what it refuses, plus a small conformance check
 * of the keywords the api's document uses. Query values are strings on the wire: `fromQuery` reads
 * one as the schema's type before checking it.
 */
export type Schema = SchemaObject & { $ref?: string };

export function resolve(doc: OpenAPIObject, s: Schema): Schema {
  const ref = s.$ref ?? (s.allOf?.length === 1 ? (s.allOf[0] as Schema).$ref : undefined);
  return ref ? (doc.components?.schemas?.[ref.split('/').pop() as string] as Schema) : s;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `v` is valid against `s` for the keywords the document uses. */
export function conforms(doc: OpenAPIObject, schema: Schema, v: unknown): boolean {
  const s = resolve(doc, schema);
  if (v === null) return schema.nullable === true || s.nullable === true;
  if (s.oneOf) return s.oneOf.filter((b) => conforms(doc, b as Schema, v)).length === 1;
  if (s.enum && !s.enum.includes(v)) return false;
  switch (s.type) {
    case 'string':
      if (typeof v !== 'string') return false;
      if (s.minLength !== undefined && v.length < s.minLength) return false;
      if (s.maxLength !== undefined && v.length > s.maxLength) return false;
      if (s.pattern !== undefined && !new RegExp(s.pattern).test(v)) return false;
      if (s.format === 'uri' && !URL.canParse(v)) return false;
      if (s.format === 'date-time' && !(RFC3339.test(v) && !Number.isNaN(Date.parse(v)))) return false;
      return true;
    case 'integer':
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v) || (s.type === 'integer' && !Number.isInteger(v))) return false;
      return (s.minimum === undefined || v >= s.minimum) && (s.maximum === undefined || v <= s.maximum);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      if (!Array.isArray(v)) return false;
      if ((s.minItems !== undefined && v.length < s.minItems) || (s.maxItems !== undefined && v.length > s.maxItems)) return false;
      return v.every((x) => !s.items || conforms(doc, s.items as Schema, x));
    case 'object': {
      if (!isPlainObject(v)) return false;
      if ((s.required ?? []).some((k) => v[k] === undefined)) return false;
      if (s.maxProperties !== undefined && Object.keys(v).length > s.maxProperties) return false;
      for (const [k, x] of Object.entries(v)) {
        const p = s.properties?.[k] as Schema | undefined;
        if (p) {
          if (!conforms(doc, p, x)) return false;
        } else if (s.additionalProperties === false) return false;
        else if (isPlainObject(s.additionalProperties) && !conforms(doc, s.additionalProperties as Schema, x)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

/** A query string value as the schema's type (what the api's `@Type(() => Number)` and friends read). */
export function fromQuery(doc: OpenAPIObject, schema: Schema, text: string): unknown {
  const s = resolve(doc, schema);
  const types = (s.oneOf ?? [s]).map((b) => resolve(doc, b as Schema).type);
  if (types.includes('string') && conforms(doc, s, text)) return text;
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

const FILL = ['a', '1', 'A', 'x-1'];

/** A string of exactly `length` characters matching `pattern`, built from a few fillers, or undefined. */
function stringOf(length: number, pattern: string | undefined, seed?: unknown): string | undefined {
  const re = pattern === undefined ? undefined : new RegExp(pattern);
  const candidates = [
    ...(typeof seed === 'string' ? [seed.padEnd(length, seed.includes('/') ? 'a' : '0').slice(0, length)] : []),
    ...FILL.map((f) => f.repeat(Math.ceil(length / f.length)).slice(0, length)),
  ];
  return candidates.find((c) => c.length === length && (!re || re.test(c)));
}

/** Values `s` allows: boundaries, enum values, the example and the default. */
export function validValues(doc: OpenAPIObject, schema: Schema): unknown[] {
  const s = resolve(doc, schema);
  if (s.oneOf) return s.oneOf.flatMap((b) => validValues(doc, b as Schema));
  if (s.enum) return [...s.enum];
  const out: unknown[] = [s.example, s.default];
  switch (s.type) {
    case 'string': {
      const seed = typeof s.example === 'string' ? s.example : undefined;
      const lengths = [s.minLength ?? 1, Math.min(s.maxLength ?? 40, 4096)];
      for (const n of lengths) out.push(s.format === 'uri' ? (seed ? stringOf(n, s.pattern, seed) : undefined) : stringOf(n, s.pattern, seed));
      break;
    }
    case 'integer':
    case 'number':
      out.push(s.minimum, s.maximum, s.minimum === undefined && s.maximum === undefined ? 1 : undefined);
      break;
    case 'boolean':
      out.push(true, false);
      break;
    case 'object':
      if (isPlainObject(s.additionalProperties)) out.push({});
      break;
  }
  return dedupe(out.filter((v) => v !== undefined && conforms(doc, s, v)));
}

/** Values `s` refuses: one past each boundary, the wrong type, off the pattern or the enum. */
export function invalidValues(doc: OpenAPIObject, schema: Schema, inQuery: boolean): unknown[] {
  const s = resolve(doc, schema);
  const forms = (s.oneOf ?? [s]).map((b) => resolve(doc, b as Schema));
  // An empty query value counts as not given (the api's validation pipe): it is tested as a missing one.
  const out: unknown[] = inQuery ? ['abc', '1.5', '-1', 'true'] : [null, 'abc', 12345, 1.5, true, {}, []];
  for (const f of forms) {
    if (f.minLength) out.push('a'.repeat(f.minLength - 1));
    if (f.maxLength !== undefined) out.push(stringOf(f.maxLength + 1, f.pattern) ?? 'a'.repeat(f.maxLength + 1));
    if (f.pattern) out.push(...['!', ' x', 'x y', '-', '\u0001', '€'].filter((c) => !new RegExp(f.pattern as string).test(c)).slice(0, 2));
    if (f.minimum !== undefined) out.push(f.minimum - 1);
    if (f.maximum !== undefined) out.push(f.maximum + 1);
    if (f.enum) out.push(typeof f.enum[0] === 'number' ? 99 : 'not-in-enum');
    if (isPlainObject(f.additionalProperties)) out.push({ 'X-Fuzz': 5 });
  }
  const wire = out.map((v) => (inQuery && v !== null && typeof v !== 'object' ? String(v) : v));
  return dedupe(wire.filter((v) => (inQuery ? typeof v === 'string' && v !== '' && !conforms(doc, s, fromQuery(doc, s, v)) : !conforms(doc, schema, v))));
}

function dedupe(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
