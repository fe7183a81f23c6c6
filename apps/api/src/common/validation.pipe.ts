import { ArgumentMetadata, BadRequestException, Injectable, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { nestedShapeProblems, validatedProperties } from './dto-metadata';

/** The schedule fields of a timer: a body gives at most one (which one is required is the schedule's rule). */
const SCHEDULE_FIELDS = ['cron', 'runAt', 'every'] as const;

/** Constraints that say what type a value must be: when one fails, it is the one message for the field. */
const TYPE_CONSTRAINTS = ['isDefined', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'isArray', 'isIn', 'isEnum'];

/** The one message of a failed field: its type rule when that failed, else its first rule. */
function oneMessage(constraints: Record<string, string>): string {
  const key = TYPE_CONSTRAINTS.find((k) => k in constraints) ?? Object.keys(constraints)[0];
  return constraints[key].replace(/ must be an integer number$/, ' must be an integer');
}

/** Shape before fields: more than one schedule field given, when the DTO has them all. */
export function scheduleShapeProblem(cls: Type<unknown>, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const known = validatedProperties(cls);
  if (!SCHEDULE_FIELDS.every((f) => known.has(f))) return undefined;
  const given = SCHEDULE_FIELDS.filter((f) => (value as Record<string, unknown>)[f] != null);
  return given.length > 1 ? `give exactly one of cron, runAt and every (got ${given.join(' and ')})` : undefined;
}

/**
 * Validation of every body and query against its DTO: unknown fields rejected, values converted.
 * Same options as the pipe `bootstrapRole` installs; registered in the module so tests that build the
 * app with Nest's testing module validate the same way. When the bootstrap pipe already produced a
 * validated DTO instance, this one passes it through instead of validating twice.
 *
 * One message per failed field, naming its type when that is what is wrong ("maxAttempts must be an
 * integer"), no message twice; more than one schedule field is refused before any field is looked at.
 * Two rules class-validator lacks: a nested DTO given as anything but an object is refused, naming it
 * (see `nestedShapeProblems`); an empty query value (`?status=`) counts as not given, where `Number('')`
 * would silently read it as 0.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true, forbidUnknownValues: true });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (typeof type === 'function' && value instanceof type && type !== Object) return value;
    // First: an empty query value is not given, for the shape check as for the fields.
    if (metadata.type === 'query' && typeof value === 'object' && value !== null) {
      value = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== ''));
    }
    if (typeof type === 'function' && type !== Object) {
      const shape = scheduleShapeProblem(type as Type<unknown>, value);
      if (shape) throw new BadRequestException([shape]);
      const problems = nestedShapeProblems(type, value);
      if (problems.length > 0) throw new BadRequestException(problems);
    }
    return super.transform(value, metadata);
  }

  /** One message per failed field (its type rule first), each message once. */
  protected override flattenValidationErrors(errors: ValidationError[]): string[] {
    const out = new Set<string>();
    for (const e of errors) {
      for (const item of this.mapChildrenToValidationErrors(e)) if (item.constraints) out.add(oneMessage(item.constraints));
    }
    return [...out];
  }
}
