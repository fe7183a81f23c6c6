import { execFileSync } from 'child_process';
import { join } from 'path';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..', '..');

/**
 * True when a role registers a metric of this exact name (its name appears quoted in apps/ or libs/):
 * the dashboard and the alert rules must only query metrics that exist, so a rename cannot silently
 * blank a panel or mute an alert.
 */
export function registeredInCode(name: string): boolean {
  try {
    execFileSync('grep', ['-rqF', `'${name}'`, 'apps', 'libs', '--include=*.ts'], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}

/** Names of prom-client's default process and Node.js metrics, as every role exports them (unprefixed). */
export function defaultMetricNames(): Set<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return new Set(registry.getMetricsAsArray().map((m) => m.name));
}

/**
 * Metric names a PromQL expression selects: identifiers not followed by `(` (functions) and not
 * inside quotes, `by (...)` lists, `{...}` or `[...]`.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '');
  const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset']);
  return [...stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1]).filter((n) => !keywords.has(n) && !/^\d/.test(n));
}

/** A series name without its histogram suffix (`_bucket`, `_sum`, `_count`). */
export const baseName = (n: string): string => n.replace(/_(bucket|sum|count)$/, '');
