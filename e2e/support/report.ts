import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_DIR } from './stack';

/** Where commands (chaos, benchmarks) write their figures: git-ignored. */
export const RESULTS_DIR = join(ROOT_DIR, '.local', 'results');

type Cell = string | number | boolean | null | undefined;

/** A Markdown table; numbers are rounded to `digits` decimals, missing values shown as `-`. */
export function markdownTable(head: string[], rows: Cell[][], digits = 0): string {
  const cell = (c: Cell) => (c === null || c === undefined || (typeof c === 'number' && !Number.isFinite(c)) ? '-' : typeof c === 'number' ? String(Number(c.toFixed(digits))) : String(c));
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

/** Writes `<name>-<timestamp>.json` and `.md` under .local/results; returns their common path. */
export function writeResults(name: string, json: unknown, md: string): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const base = join(RESULTS_DIR, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${base}.md`, md.endsWith('\n') ? md : `${md}\n`);
  return base;
}

/**
 * Numeric command-line options over their defaults: `--fault-every 15` or `--fault-every=15` sets
 * `faultEvery`. An unknown flag, a missing or a negative value throws, naming the flag.
 */
export function numericFlags<T extends Record<string, number>>(argv: string[], defaults: T): T {
  const out: Record<string, number> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const key = flag.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (!flag.startsWith('--') || !(key in defaults)) throw new Error(`unknown option ${flag} (known: ${Object.keys(defaults).map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')})`);
    const value = Number(inline ?? argv[++i]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`bad value for ${flag}: ${inline ?? argv[i]}`);
    out[key] = value;
  }
  return out as T;
}
