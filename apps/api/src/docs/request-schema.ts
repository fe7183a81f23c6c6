import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/** One route of a controller and the DTO classes its `@Body()` and `@Query()` are validated against. */
export interface RouteInputs {
  controller: string;
  handler: string;
  path: string;
  method: string;
  body?: Type<unknown>;
  query?: Type<unknown>;
}

const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [v === undefined ? '' : String(v)]);
const joinPath = (...parts: string[]) => '/' + parts.join('/').split('/').filter(Boolean).join('/');

/** Every route of the controllers, as `SwaggerModule` names its path, with its validated inputs. */
export function routeInputs(controllers: readonly Type<unknown>[]): RouteInputs[] {
  const out: RouteInputs[] = [];
  for (const controller of controllers) {
    const base = asList(Reflect.getMetadata(PATH_METADATA, controller))[0];
    for (const handler of Object.getOwnPropertyNames(controller.prototype)) {
      const fn: unknown = controller.prototype[handler];
      if (handler === 'constructor' || typeof fn !== 'function') continue;
      const method: unknown = Reflect.getMetadata(METHOD_METADATA, fn);
      if (typeof method !== 'number') continue;
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<string, { index: number; data?: unknown }>;
      const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, handler) ?? []) as Type<unknown>[];
      const route: RouteInputs = { controller: controller.name, handler, path: joinPath(base, asList(Reflect.getMetadata(PATH_METADATA, fn))[0]), method: RequestMethod[method].toLowerCase() };
      for (const [key, arg] of Object.entries(args)) {
        const kind = Number(key.split(':')[0]);
        // A whole-object `@Body()` / `@Query()` (no property name) is what the validation pipe checks against a DTO.
        if (arg.data !== undefined || typeof types[arg.index] !== 'function' || types[arg.index] === Object) continue;
        if (kind === RouteParamtypes.BODY) route.body = types[arg.index];
        if (kind === RouteParamtypes.QUERY) route.query = types[arg.index];
      }
      out.push(route);
    }
  }
  return out;
}

/** The class-validator metadata of a DTO (its parents' and mapped types' included), by property. */
export function validatedProperties(cls: Type<unknown>): Map<string, ValidationMetadata[]> {
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) {
    byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  }
  return byProperty;
}

// class-transformer keeps its `@Type()` metadata in a module its public entry does not export (Nest's
// mapped types read it the same way); its types are published beside it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

/** The class a `@ValidateNested()` property is transformed into (`@Type(() => X)`), if any. */
export function nestedClass(cls: Type<unknown>, property: string): Type<unknown> | undefined {
  const meta = defaultMetadataStorage.findTypeMetadata(cls, property);
  const t = meta?.typeFunction();
  return typeof t === 'function' && t !== Object ? (t as Type<unknown>) : undefined;
}

const nameOf = (m: ValidationMetadata): string => (m as ValidationMetadata & { name?: string }).name ?? m.type;
/** An optional property (`@IsOptional()`): absent or null skips its other rules. */
export const isOptional = (ms: ValidationMetadata[]): boolean => ms.some((m) => m.type === 'conditionalValidation' && nameOf(m) === 'isOptional');

/**
 * The JSON Schema keywords class-validator enforces on a property, by the type of value they apply to
 * (`string` keywords apply to strings, `number` keywords to numbers, `any` to every value). Rules with
 * no keyword (a custom validator such as the callback URL's) are stated in the property's description.
 */
export function constraintKeywords(ms: ValidationMetadata[]): { string: SchemaObject; number: SchemaObject; any: SchemaObject } {
  const k = { string: {} as SchemaObject, number: {} as SchemaObject, any: {} as SchemaObject };
  for (const m of ms) {
    const c = m.constraints ?? [];
    switch (nameOf(m)) {
      case 'matches': {
        const re = c[0] instanceof RegExp ? c[0] : new RegExp(String(c[0]), typeof c[1] === 'string' ? c[1] : undefined);
        // JSON Schema patterns carry no flags: a flagged regex must be rewritten without them to be documented.
        if (re.flags === '') k.string.pattern = re.source;
        break;
      }
      case 'minLength':
        k.string.minLength = Number(c[0]);
        break;
      case 'maxLength':
        k.string.maxLength = Number(c[0]);
        break;
      case 'isLength':
        k.string.minLength = Number(c[0]);
        if (c[1] !== undefined) k.string.maxLength = Number(c[1]);
        break;
      case 'min':
        k.number.minimum = Number(c[0]);
        break;
      case 'max':
        k.number.maximum = Number(c[0]);
        break;
      case 'isInt':
        k.number.type = 'integer';
        break;
      case 'isIn':
        k.any.enum = [...(c[0] as unknown[])];
        break;
    }
  }
  return k;
}

type Schema = SchemaObject | ReferenceObject;
const isRef = (s: Schema): s is ReferenceObject => '$ref' in s;

/** A schema with `$ref` (alone or as the single `allOf`) resolved to the component it names. */
function resolve(doc: OpenAPIObject, s: Schema | undefined): SchemaObject | undefined {
  if (!s) return undefined;
  const target = isRef(s) ? s : s.allOf?.length === 1 && isRef(s.allOf[0]) ? s.allOf[0] : undefined;
  if (!target) return s as SchemaObject;
  return doc.components?.schemas?.[target.$ref.replace('#/components/schemas/', '')] as SchemaObject | undefined;
}

/**
 * The value forms a property schema offers: its `oneOf` branches, or itself. Nest sets a `type` beside
 * a `oneOf` (from the TypeScript type), which would make every other branch unsatisfiable: it goes.
 */
function forms(s: SchemaObject): SchemaObject[] {
  if (!s.oneOf) return [s];
  delete s.type;
  return s.oneOf.filter((b): b is SchemaObject => !isRef(b));
}

/** Writes the keywords of one property's validators into its schema (the validators are the contract). */
export function describeProperty(s: SchemaObject, ms: ValidationMetadata[]): void {
  const k = constraintKeywords(ms);
  for (const form of forms(s)) {
    if (form.type === 'string') Object.assign(form, k.string);
    if (form.type === 'number' || form.type === 'integer') Object.assign(form, k.number);
  }
  if (k.any.enum && !s.oneOf) s.enum = k.any.enum;
}

/**
 * Makes an object schema say what the validation pipe does with the class: every validated property
 * with its keywords, `required` = the properties without `@IsOptional()`, and `additionalProperties:
 * false` (the pipe runs with `forbidNonWhitelisted`: an unknown property is a 400 naming it). Recurses
 * into `@ValidateNested()` properties, which the pipe checks the same way.
 */
export function describeBody(doc: OpenAPIObject, schema: Schema | undefined, cls: Type<unknown>, seen = new Set<SchemaObject>()): void {
  const s = resolve(doc, schema);
  if (!s || seen.has(s)) return;
  seen.add(s);
  s.additionalProperties = false;
  const props = validatedProperties(cls);
  const required: string[] = [];
  for (const [name, ms] of props) {
    if (!isOptional(ms)) required.push(name);
    const p = s.properties?.[name];
    if (!p) continue;
    const nested = nestedClass(cls, name);
    if (nested && ms.some((m) => m.type === 'nestedValidation')) describeBody(doc, p, nested, seen);
    else if (!isRef(p)) describeProperty(p, ms);
  }
  if (required.length > 0) s.required = required;
  else delete s.required;
}

/** The same for a query DTO, whose properties Nest lists as `in: query` parameters. */
export function describeQuery(op: OperationObject, cls: Type<unknown>): void {
  const props = validatedProperties(cls);
  for (const p of (op.parameters ?? []) as (ParameterObject | ReferenceObject)[]) {
    if ('$ref' in p || p.in !== 'query') continue;
    const ms = props.get(p.name);
    if (!ms) continue;
    p.required = !isOptional(ms);
    if (p.schema && !isRef(p.schema)) describeProperty(p.schema, ms);
  }
}
