/**
 * Templated callbacks (`notifyHTTPParam.template: true`): `{{name}}` placeholders in the URL, the header
 * values and the body, filled per fire. Without `template: true` nothing here runs and the request is
 * sent verbatim. There is no escape for a literal `{{`: a templated text may not contain one that is
 * not a placeholder (refused when the timer is written).
 */
export const TEMPLATE_PLACEHOLDERS = ['scheduledAt', 'scheduledAtIso', 'previousScheduledAt', 'fireId', 'attempt', 'timerId', 'app'] as const;
export type TemplatePlaceholder = (typeof TEMPLATE_PLACEHOLDERS)[number];

/** The value of every placeholder for one delivery attempt (`previousScheduledAt` is '' for a first fire). */
export type TemplateValues = Record<TemplatePlaceholder, string>;

const KNOWN = new Set<string>(TEMPLATE_PLACEHOLDERS);
const PLACEHOLDER = /\{\{([A-Za-z]+)\}\}/g;

/**
 * Why `text` is not a usable template, naming the placeholder (`unknown placeholder {{foo}}`,
 * `malformed placeholder at "{{ app"`), or undefined when every `{{` opens a known placeholder.
 */
export function templateProblem(text: string): string | undefined {
  for (let i = text.indexOf('{{'); i !== -1; i = text.indexOf('{{', i + 2)) {
    const m = /^\{\{([A-Za-z]+)\}\}/.exec(text.slice(i, i + 64));
    if (!m) return `malformed placeholder at ${JSON.stringify(text.slice(i, i + 20))}: expected {{name}} with one of ${TEMPLATE_PLACEHOLDERS.join(', ')}`;
    if (!KNOWN.has(m[1])) return `unknown placeholder {{${m[1]}}}: expected one of ${TEMPLATE_PLACEHOLDERS.join(', ')}`;
    i += m[0].length - 2;
  }
  return undefined;
}

/** Whether `text` names the placeholder (so a costly value is computed only when used). */
export function usesPlaceholder(text: string | undefined, name: TemplatePlaceholder): boolean {
  return text !== undefined && text.includes(`{{${name}}}`);
}

/** `text` with its placeholders replaced by `encode(value)`; anything unknown is left as it is. */
export function fillTemplate(text: string, values: TemplateValues, encode: (v: string) => string = (v) => v): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (KNOWN.has(name) ? encode(values[name as TemplatePlaceholder]) : whole));
}

/** The parts of a callback a template fills. */
export interface TemplatedParts {
  url: string;
  header?: Record<string, string[]>;
  body?: string;
}

/**
 * The URL (values URL-encoded), the header values and the body of a callback filled for one fire.
 * Header names are not templated; the values are digits, an ISO instant, ids and the app name, none of
 * which can carry CR/LF into a header.
 */
export function fillCallback<T extends TemplatedParts>(parts: T, values: TemplateValues): T {
  const out: T = { ...parts, url: fillTemplate(parts.url, values, encodeURIComponent) };
  if (parts.header) {
    out.header = Object.fromEntries(Object.entries(parts.header).map(([name, vs]) => [name, vs.map((v) => fillTemplate(v, values))]));
  }
  if (parts.body !== undefined) out.body = fillTemplate(parts.body, values);
  return out;
}
