import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';

/**
 * Validation of every body and query against its DTO: unknown fields rejected, values converted.
 * Same options as the pipe `bootstrapRole` installs; registered in the module so tests that build the
 * app with Nest's testing module validate the same way. When the bootstrap pipe already produced a
 * validated DTO instance, this one passes it through instead of validating twice.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true, forbidUnknownValues: true });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (typeof type === 'function' && value instanceof type && type !== Object) return value;
    return super.transform(value, metadata);
  }
}
