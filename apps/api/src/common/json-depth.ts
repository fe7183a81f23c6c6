import { TextDecoder } from 'util';
import { jsonTextProblem } from './json-guard';

/** Deepest nesting of arrays and objects a JSON request body may have (`{}` is depth 1). */
export const MAX_JSON_DEPTH = 64;

const [QUOTE, BACKSLASH, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = Array.from('"\\[]{}', (c) => c.charCodeAt(0));

/**
 * True when the UTF-8 JSON text nests arrays and objects deeper than `max`. One pass counting brackets
 * outside strings, without recursion, so it is safe on any input before `JSON.parse` (whose result the
 * validation would then walk recursively). Bytes of multi-byte UTF-8 characters are never ASCII, so
 * they cannot pass for a quote or a bracket. Malformed text is left to `JSON.parse` to refuse.
 */
export function jsonNestsDeeperThan(utf8: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < utf8.length; i++) {
    const c = utf8[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if ((c === CLOSE_ARRAY || c === CLOSE_OBJECT) && depth > 0) {
      depth--;
    }
  }
  return false;
}

/** A body-parser style failure: the filter renders it by `type` (see `parserError`). */
function parserFailure(status: number, type: string, message: string, extra: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { status, type, expose: true, ...extra });
}

/** The body as UTF-8 bytes; JSON in a charset `TextDecoder` cannot read is refused (415). */
function utf8Of(body: Buffer, charset: string): Uint8Array {
  if (charset === 'utf-8' || charset === 'utf8') return body;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw parserFailure(415, 'charset.unsupported', `unsupported charset "${charset}"`, { charset });
  }
  return Buffer.from(decoder.decode(body), 'utf8');
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `verify` hook of the JSON body parser: it sees the raw bytes (decompressed, not yet decoded) before
 * `JSON.parse`. Refuses with 400 a body nested deeper than MAX_JSON_DEPTH (`entity.too.deep`), bytes
 * that are not UTF-8 (the decoder would turn them into U+FFFD), and what `jsonTextProblem` finds
 * (`entity.refused`): input the parser would silently rewrite is refused instead. `digitKeys` are the
 * id fields of the API's bodies, whose numbers must be written in digits.
 */
export function verifyJsonBody(_req: unknown, _res: unknown, body: Buffer, charset: string, digitKeys?: ReadonlySet<string>): void {
  const utf8 = utf8Of(body, charset);
  if (jsonNestsDeeperThan(utf8, MAX_JSON_DEPTH)) {
    throw parserFailure(400, 'entity.too.deep', `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let text: string;
  try {
    text = STRICT_UTF8.decode(utf8);
  } catch {
    throw parserFailure(400, 'entity.refused', 'request body is not valid UTF-8');
  }
  const problem = jsonTextProblem(text, digitKeys);
  if (problem) throw parserFailure(400, 'entity.refused', problem);
}
