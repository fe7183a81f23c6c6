/** Keys that would reach an object's prototype chain in some consumer: refused anywhere in a body. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A UTF-16 code unit of a surrogate pair without its other half: stored, it would become U+FFFD. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

interface Frame {
  object: boolean;
  keys: Set<string>;
  /** The current key (objects) or index (arrays), for the path in a message. */
  at: string | number;
  expectKey: boolean;
}

const pathOf = (frames: readonly Frame[]): string =>
  frames.reduce((p, f) => (typeof f.at === 'number' ? `${p}[${f.at}]` : p ? `${p}.${f.at}` : f.at), '');

/** A JSON number token, as written. */
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The key a value stands under: its object's key, or for an array element the array's key. */
function keyOf(frames: readonly Frame[]): string | undefined {
  const top = frames[frames.length - 1];
  if (top?.object) return top.at as string;
  const parent = frames[frames.length - 2];
  return top && parent?.object ? (parent.at as string) : undefined;
}

/**
 * Why a JSON text must be refused although `JSON.parse` would read it, or undefined: a key given twice
 * in one object (JSON.parse keeps the last silently), a `__proto__`, `constructor` or `prototype` key
 * (dropped or dangerous downstream), a string or key holding a lone surrogate, a number under one of
 * `digitKeys` (ids, alone or in an array) written with a fraction or an exponent: `JSON.parse` reads
 * `1e3` and `1.0` as the integers 1000 and 1, which the query string (`?id=1e3`) refuses, so an id has
 * one grammar, digits. Each message names the path. One pass over the text; malformed text is left to
 * `JSON.parse` to refuse.
 */
export function jsonTextProblem(text: string, digitKeys: ReadonlySet<string> = new Set()): string | undefined {
  const frames: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = frames[frames.length - 1];
    if (c === '"') {
      let end = i + 1;
      let escaped = false;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? ((escaped = true), 2) : 1;
      let value: string;
      try {
        value = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
      } catch {
        return undefined;
      }
      i = end;
      if (top?.object && top.expectKey) {
        top.expectKey = false;
        top.at = value;
        const path = pathOf(frames);
        if (FORBIDDEN_KEYS.has(value)) return `${path}: the key ${JSON.stringify(value)} is not allowed (nor __proto__, constructor or prototype anywhere)`;
        if (top.keys.has(value)) return `${path}: duplicate key ${JSON.stringify(value)} (each key may be given once)`;
        top.keys.add(value);
        if (escaped && LONE_SURROGATE.test(value)) return `${path}: the key holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)`;
      } else if (escaped && LONE_SURROGATE.test(value)) {
        return `${pathOf(frames) || 'the body'} holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which cannot be stored`;
      }
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0] ?? c;
      i += token.length - 1;
      const key = keyOf(frames);
      if (key !== undefined && digitKeys.has(key) && !/^-?\d+$/.test(token)) return `${pathOf(frames)} must be written in digits (a JSON integer or a digit string), not ${token}`;
    } else if (c === '{' || c === '[') {
      frames.push({ object: c === '{', keys: new Set(), at: c === '{' ? '' : 0, expectKey: c === '{' });
    } else if (c === '}' || c === ']') {
      frames.pop();
    } else if (c === ',' && top) {
      if (top.object) top.expectKey = true;
      else top.at = (top.at as number) + 1;
    }
  }
  return undefined;
}
