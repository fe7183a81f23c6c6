import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { isOptional, ruleName, singleNested, transformedBy, validatedProperties } from '../common/dto-metadata';
import { toTimerId } from '../common/validators';

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
/** A route's path as the document names it: Nest's `:name` parameters as `{name}`. */
const joinPath = (...parts: string[]) =>
  '/' +
  parts
    .join('/')
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `{${seg.slice(1)}}` : seg))
    .join('/');

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

/** class-validator rules with one numeric constraint: the value form they apply to and their keyword. */
const ONE_VALUE: Record<string, ['string' | 'number', string]> = {
  minLength: ['string', 'minLength'],
  maxLength: ['string', 'maxLength'],
  min: ['number', 'minimum'],
  max: ['number', 'maximum'],
};

/**
 * The JSON Schema keywords class-validator enforces on a property, by the type of value they apply to
 * (`string` keywords apply to strings, `number` keywords to numbers, `any` to every value). Rules with
 * no keyword (a custom validator such as the callback URL's) are stated in the property's description.
 */
export function constraintKeywords(ms: readonly ValidationMetadata[]): { string: SchemaObject; number: SchemaObject; any: SchemaObject } {
  const k = { string: {} as SchemaObject, number: {} as SchemaObject, any: {} as SchemaObject };
  for (const m of ms) {
    const c = m.constraints ?? [];
    const rule = ruleName(m);
    if (rule in ONE_VALUE) {
      const [form, keyword] = ONE_VALUE[rule];
      (k[form] as Record<string, unknown>)[keyword] = Number(c[0]);
    } else if (rule === 'matches') {
      const re = c[0] instanceof RegExp ? c[0] : new RegExp(String(c[0]), typeof c[1] === 'string' ? c[1] : undefined);
      // JSON Schema patterns carry no flags: a flagged regex must be rewritten without them to be documented.
      if (re.flags === '') k.string.pattern = re.source;
    } else if (rule === 'isLength') {
      k.string.minLength = Number(c[0]);
      if (c[1] !== undefined) k.string.maxLength = Number(c[1]);
    } else if (rule === 'isInt') k.number.type = 'integer';
    else if (rule === 'arrayMinSize') k.any.minItems = Number(c[0]);
    else if (rule === 'arrayMaxSize') k.any.maxItems = Number(c[0]);
    else if (rule === 'isIn') k.any.enum = [...(c[0] as unknown[])];
    else if (rule === 'isCallbackUrl') k.string.format = 'uri';
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

/** The one grammar of ids, which JSON Schema cannot say of a number (it sees `1e3` as the integer 1000). */
const ID_DIGITS = 'Written in digits, as a JSON integer or a digit string: `1e3`, `1.0`, `-1` or `"0x10"` is refused (400 naming the field), in a body as in a query.';

/**
 * An id read by `toTimerId` is validated as a digit string but also accepted as a JSON integer (up to
 * 2^53 - 1, what a JSON number holds exactly) written in digits: both forms go in the document.
 */
function numericIdForms(s: SchemaObject): void {
  if (!s.oneOf) {
    const { description, example, ...string } = s;
    for (const k of Object.keys(s)) delete (s as Record<string, unknown>)[k];
    Object.assign(s, { description, example, oneOf: [{ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, { ...string, type: 'string' }] });
  }
  if (!s.description?.includes(ID_DIGITS)) s.description = [s.description, ID_DIGITS].filter(Boolean).join(' ');
}

/** Writes the keywords of one property's validators into its schema (the validators are the contract). */
export function describeProperty(s: SchemaObject, ms: readonly ValidationMetadata[]): void {
  const k = constraintKeywords(ms);
  for (const form of forms(s)) {
    if (form.type === 'string') Object.assign(form, k.string);
    if (form.type === 'number' || form.type === 'integer') Object.assign(form, k.number);
  }
  if (k.any.enum && !s.oneOf) s.enum = k.any.enum;
  if (s.type === 'array') Object.assign(s, { ...(k.any.minItems !== undefined ? { minItems: k.any.minItems } : {}), ...(k.any.maxItems !== undefined ? { maxItems: k.any.maxItems } : {}) });
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
    let p = s.properties?.[name];
    if (!p) continue;
    // `@IsOptional()` lets null through as "not given": say so (a bare $ref takes no sibling keywords).
    if (isOptional(ms)) {
      if (isRef(p)) p = s.properties![name] = { allOf: [p] };
      p.nullable = true;
    }
    const nested = singleNested(cls, name, ms);
    if (nested) describeBody(doc, p, nested, seen);
    else if (!isRef(p)) {
      if (transformedBy(cls, name, toTimerId)) numericIdForms(p);
      describeProperty(p, ms);
    }
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
    // The pipe reads an empty value (`?status=`) of an optional parameter as not given: OpenAPI's word for it.
    if (!p.required) p.allowEmptyValue = true;
    if (p.schema && !isRef(p.schema)) describeProperty(p.schema, ms);
  }
}
