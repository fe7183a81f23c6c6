import { ArgumentMetadata, BadRequestException, Injectable, ValidationPipe } from '@nestjs/common';
import { nestedShapeProblems } from './dto-metadata';

/**
 * Validation of every body and query against its DTO: unknown fields rejected, values converted.
 * Same options as the pipe `bootstrapRole` installs; registered in the module so tests that build the
 * app with Nest's testing module validate the same way. When the bootstrap pipe already produced a
 * validated DTO instance, this one passes it through instead of validating twice.
 *
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
    if (typeof type === 'function' && type !== Object) {
      const problems = nestedShapeProblems(type, value);
      if (problems.length > 0) throw new BadRequestException(problems);
    }
    if (metadata.type === 'query' && typeof value === 'object' && value !== null) {
      value = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== ''));
    }
    return super.transform(value, metadata);
  }
}
