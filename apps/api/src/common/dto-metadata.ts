import { Type } from '@nestjs/common';
import { TransformationType } from 'class-transformer';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/** {@link validatedProperties} by class: the decorators ran when the classes were loaded, and a batch create reads them once per item. */
const validatedByClass = new WeakMap<Type<unknown>, ReadonlyMap<string, readonly ValidationMetadata[]>>();

/** The class-validator metadata of a DTO (its parents' and mapped types' included), by property. */
export function validatedProperties(cls: Type<unknown>): ReadonlyMap<string, readonly ValidationMetadata[]> {
  const known = validatedByClass.get(cls);
  if (known) return known;
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) {
    byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  }
  validatedByClass.set(cls, byProperty);
  return byProperty;
}

// class-transformer keeps its `@Type()` metadata in a module its public entry does not export (Nest's
// mapped types read it the same way); its types are published beside it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

/** The class a property is transformed into (`@Type(() => X)`), if it is a class. */
export function nestedClass(cls: Type<unknown>, property: string): Type<unknown> | undefined {
  const t = defaultMetadataStorage.findTypeMetadata(cls, property)?.typeFunction();
  return typeof t === 'function' && t !== Object ? (t as Type<unknown>) : undefined;
}

/** Whether the property is converted by `fn` (`@Transform(fn)`) before it is validated. */
export function transformedBy(cls: Type<unknown>, property: string, fn: (...args: never[]) => unknown): boolean {
  return defaultMetadataStorage.findTransformMetadatas(cls, property, TransformationType.PLAIN_TO_CLASS).some((m) => m.transformFn === fn);
}

export const ruleName = (m: ValidationMetadata): string => (m as ValidationMetadata & { name?: string }).name ?? m.type;

/** An optional property (`@IsOptional()`): absent or null skips its other rules. */
export const isOptional = (ms: readonly ValidationMetadata[]): boolean => ms.some((m) => m.type === 'conditionalValidation' && ruleName(m) === 'isOptional');

/** A `@ValidateNested()` property holding one object of class `X` (`@Type(() => X)`), not a list of them. */
export function singleNested(cls: Type<unknown>, property: string, ms: readonly ValidationMetadata[]): Type<unknown> | undefined {
  return ms.some((m) => m.type === 'nestedValidation' && !m.each) ? nestedClass(cls, property) : undefined;
}

/**
 * Where a value gives something other than an object for a nested DTO (`notifyHTTPParam: []`), with
 * its path. class-validator validates the elements of an array given for a `@ValidateNested()`
 * property, so an empty array would pass as an empty DTO with none of its required fields.
 */
export function nestedShapeProblems(cls: Type<unknown>, value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const problems: string[] = [];
  for (const [property, ms] of validatedProperties(cls)) {
    const nested = singleNested(cls, property, ms);
    const v = (value as Record<string, unknown>)[property];
    if (!nested || v === undefined || v === null) continue;
    if (typeof v !== 'object' || Array.isArray(v)) problems.push(`${prefix}${property} must be an object`);
    else problems.push(...nestedShapeProblems(nested, v, `${prefix}${property}.`));
  }
  return problems;
}

/**
 * The names of the properties that `fn` converts (`@Transform(fn)`) in these DTOs and the DTOs nested
 * in them: e.g. every id field of the API's bodies.
 */
export function propertiesTransformedBy(classes: readonly Type<unknown>[], fns: readonly ((...args: never[]) => unknown)[]): Set<string> {
  const out = new Set<string>();
  const seen = new Set<Type<unknown>>();
  const walk = (cls: Type<unknown>): void => {
    if (seen.has(cls)) return;
    seen.add(cls);
    for (const [property, ms] of validatedProperties(cls)) {
      if (fns.some((fn) => transformedBy(cls, property, fn))) out.add(property);
      const nested = singleNested(cls, property, ms);
      if (nested) walk(nested);
    }
  };
  classes.forEach(walk);
  return out;
}
