import { execFileSync } from 'child_process';
import { join } from 'path';

/** The generated types of @timer/client: checked in, compared with the served document by client.int-spec.ts. */
export const GENERATED_TYPES = join(__dirname, '../src/lib/openapi.generated.ts');

/** The types scripts/client-types.js generates for an OpenAPI document, as the checked-in file holds them. */
export function clientTypesOf(doc: object): string {
  return execFileSync(process.execPath, [join(__dirname, '../../../scripts/client-types.js')], { input: JSON.stringify(doc), encoding: 'utf8', maxBuffer: 64 << 20 });
}
