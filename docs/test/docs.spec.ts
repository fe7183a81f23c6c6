import 'reflect-metadata';
import { readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';
import { getMetadataStorage } from 'class-validator';
import { CallbackTimeoutMaxEnv, MysqlEnv, PulsarEnv, RedisEnv, RoleEnv } from '@timer/platform';
import { ApiEnv } from '../../apps/api/src/config/api.env';
import { ExecutorEnv } from '../../apps/executor/src/config/executor.env';
import { MigratorEnv } from '../../apps/migrator/src/config/migrator.env';
import { SchedulerEnv } from '../../apps/scheduler/src/config/scheduler.env';
import { TriggerEnv } from '../../apps/trigger/src/config/trigger.env';

// The docs kept true: every relative link and anchor resolves, and docs/configuration.md lists
// exactly the TIMER_* variables the config classes declare, with their roles, defaults and ranges.

const ROOT = resolve(__dirname, '..', '..');
const SKIP_DIRS = new Set(['node_modules', 'dist', '.local', '.git', 'tmp', 'coverage']);
const ALL_ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'];

function markdownFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : markdownFiles(join(dir, e.name));
    return e.name.endsWith('.md') ? [join(dir, e.name)] : [];
  });
}

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface Link {
  file: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    links.push({ file, target });
  }
  return links;
}

function brokenLink({ file, target }: Link): string | undefined {
  const [path, anchor] = target.split('#', 2);
  const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  let isFile: boolean;
  try {
    isFile = statSync(dest).isFile();
  } catch {
    return `${relative(ROOT, file)}: ${target}: ${relative(ROOT, dest)} does not exist`;
  }
  if (anchor === undefined || !isFile || !dest.endsWith('.md')) return undefined;
  if (!anchorsOf(readFileSync(dest, 'utf8')).has(anchor.toLowerCase())) return `${relative(ROOT, file)}: ${target}: no heading #${anchor} in ${relative(ROOT, dest)}`;
  return undefined;
}

describe('links', () => {
  const files = markdownFiles();

  it('finds the docs', () => {
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/configuration.md', 'docs/architecture.md']));
  });

  it('resolves every relative link and anchor of every markdown file', () => {
    const broken = files.flatMap(relativeLinks).map(brokenLink).filter((b): b is string => b !== undefined);
    expect(broken).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    expect([...anchorsOf('# A `b` c\n## Fair delivery (per app)\n## x\n## x\n```\n# not a heading\n```\n')]).toEqual(['a-b-c', 'fair-delivery-per-app', 'x', 'x-1']);
  });
});

// ---- configuration ------------------------------------------------------------------------------

type EnvClass = new () => object;

/** Each config class and the roles that read it (`RoleConfig` loads MysqlEnv for the roles that use MySQL). */
const CLASSES: [EnvClass, string[]][] = [
  [RoleEnv, ALL_ROLES],
  [MysqlEnv, ['api', 'migrator', 'trigger', 'executor']],
  [RedisEnv, ALL_ROLES],
  [PulsarEnv, ALL_ROLES],
  [ApiEnv, ['api']],
  [CallbackTimeoutMaxEnv, ['api']],
  [MigratorEnv, ['migrator']],
  [SchedulerEnv, ['scheduler']],
  [TriggerEnv, ['trigger']],
  [ExecutorEnv, ['executor']],
];

interface Declared {
  roles: Set<string>;
  default: unknown;
  min?: number;
  max?: number;
  values?: string[];
}

export function declaredVariables(): Map<string, Declared> {
  const out = new Map<string, Declared>();
  for (const [cls, roles] of CLASSES) {
    const instance = new cls() as Record<string, unknown>;
    const rules = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
    for (const name of Object.keys(instance)) {
      const d = out.get(name) ?? { roles: new Set<string>(), default: instance[name] };
      roles.forEach((r) => d.roles.add(r));
      for (const rule of rules.filter((r) => r.propertyName === name)) {
        if (rule.name === 'min') d.min = rule.constraints[0] as number;
        if (rule.name === 'max') d.max = rule.constraints[0] as number;
        if (rule.name === 'isIn') d.values = rule.constraints[0] as string[];
      }
      out.set(name, d);
    }
  }
  return out;
}

interface Documented {
  roles: string;
  default: string;
  range: string;
}

/** The rows `| TIMER_X | roles | default | range | meaning |` of docs/configuration.md's role tables. */
export function documentedVariables(markdown: string): Map<string, Documented> {
  const out = new Map<string, Documented>();
  for (const line of markdown.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    const name = /^`(TIMER_[A-Z0-9_]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!name || cells.length !== 5) continue;
    if (out.has(name)) throw new Error(`docs/configuration.md lists ${name} twice`);
    out.set(name, { roles: cells[1], default: cells[2], range: cells[3] });
  }
  return out;
}

const shownDefault = (v: unknown) => (v === undefined ? 'none' : v === '' ? 'empty' : `\`${String(v)}\``);

describe('docs/configuration.md', () => {
  const markdown = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  const declared = declaredVariables();
  const documented = documentedVariables(markdown);

  it('documents every variable the config classes declare', () => {
    const undocumented = [...declared.keys()].filter((n) => !documented.has(n));
    expect(undocumented).toEqual([]);
  });

  it('documents only variables a config class declares', () => {
    const unknown = [...documented.keys()].filter((n) => !declared.has(n));
    expect(unknown).toEqual([]);
  });

  it('gives each variable the roles that read it, its default and its range', () => {
    const wrong: string[] = [];
    for (const [name, d] of declared) {
      const doc = documented.get(name);
      if (!doc) continue;
      const roles = doc.roles === 'all' ? ALL_ROLES : doc.roles.split(/,\s*/);
      if ([...d.roles].sort().join() !== [...roles].sort().join()) wrong.push(`${name}: roles ${doc.roles}, declared for ${[...d.roles].join(', ')}`);
      if (name !== 'TIMER_HTTP_PORT' && doc.default !== shownDefault(d.default)) wrong.push(`${name}: default ${doc.default}, declared ${shownDefault(d.default)}`);
      if (d.min !== undefined || d.max !== undefined) {
        const range = `${d.min ?? ''}..${d.max ?? ''}`;
        if (doc.range !== range) wrong.push(`${name}: range ${doc.range}, declared ${range}`);
      }
      if (d.values && doc.range !== d.values.map((v) => `\`${v}\``).join(', ')) wrong.push(`${name}: values ${doc.range}, declared ${d.values.join(', ')}`);
    }
    expect(wrong).toEqual([]);
  });

  it('names only variables that exist: every TIMER_* in the docs is declared or read by a script, the CLI or a test', () => {
    const others = new Set([...markdown.matchAll(/`(TIMER_[A-Z0-9_]*[A-Z0-9])`/g)].map((m) => m[1]).filter((n) => !documented.has(n)));
    const code = ['scripts', 'deploy/local', 'apps/timerctl/src', 'e2e/test', 'helm/timer', 'libs/testing/src']
      .flatMap((d) => textFiles(join(ROOT, d)))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const dynamicPort = /^TIMER_LOCAL_(API|MIGRATOR|SCHEDULER|TRIGGER|EXECUTOR)_PORT$/; // scripts/up.sh builds these names
    const unread = [...others].filter((n) => !code.includes(n) && !dynamicPort.test(n));
    expect(unread).toEqual([]);
    const pages = markdownFiles().filter((f) => !f.includes(`${join(ROOT, 'docs', 'test')}`));
    const stale = pages.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/\b(TIMER_[A-Z0-9_]*[A-Z0-9])\b/g)]
        .map((m) => m[1])
        .filter((n) => !declared.has(n) && !others.has(n) && !/_$/.test(n))
        .map((n) => `${relative(ROOT, f)}: ${n}`),
    );
    expect([...new Set(stale)]).toEqual([]);
  });
});

function textFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : textFiles(join(dir, e.name));
    return /\.(ts|js|sh|yaml|yml|tpl)$/.test(e.name) ? [join(dir, e.name)] : [];
  });
}
