/**
 * Schema fuzzer (a command, not a test; not part of `npm test`): schemathesis against the api's OpenAPI
 * document, every check on, the admin token as the auth the `ignored_auth` probes take away.
 *
 *   npm run fuzz -- [--url http://127.0.0.1:8092 --token <admin token>] [--examples 100] [--seed 1]
 *
 * Without --url it starts the built api role alone (e2e/support's Stack: its own database, Redis
 * prefix and Pulsar namespace, private callback hosts allowed so the callback URLs the schema allows
 * are accepted). Schemathesis is installed from PyPI into .local/fuzz-venv on first use. The hooks
 * (bench/fuzz/hooks.py) keep valid cases within the rules the document states in `x-timer-rules`.
 * Writes .local/results/fuzz-<time>.md (and .json): requests the api counted, failures by check.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { markdownTable, ROOT_DIR, Stack, writeResults } from '../../e2e/support';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const VENV = join(ROOT_DIR, '.local', 'fuzz-venv');
const ST = join(VENV, 'bin', 'st');
/**
 * The started api: callbacks to any host the schema allows, and room for the auth probes (each request
 * without a token is a failed authentication, which the default 20 a minute per address would turn into 429s),
 * and the callback timeout at the largest the document allows (TIMER_CALLBACK_TIMEOUT_MAX_MS caps it per deployment).
 */
const FUZZ_ENV = { TIMER_CALLBACK_ALLOW_PRIVATE: 'true', TIMER_AUTH_FAILURES_PER_MIN: '1000000', TIMER_CALLBACK_TIMEOUT_MAX_MS: '120000' };

function flags(argv: string[]): { url?: string; token: string; examples: number; seed: number } {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = argv[i].split('=', 2);
    if (!k.startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    out[k.slice(2)] = v ?? argv[++i];
  }
  const unknown = Object.keys(out).filter((k) => !['url', 'token', 'examples', 'seed'].includes(k));
  if (unknown.length > 0) throw new Error(`unknown flag --${unknown[0]}`);
  if (out.url && !out.token) throw new Error('--url needs --token (the admin token of that api)');
  return { url: out.url, token: out.token ?? `fuzz-admin-${Date.now()}`, examples: Number(out.examples ?? 100), seed: Number(out.seed ?? Date.now() % 100_000) };
}

function installSchemathesis(): void {
  if (existsSync(ST)) return;
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  };
  run('python3', ['-m', 'venv', VENV]);
  run(join(VENV, 'bin', 'pip'), ['install', '--quiet', SCHEMATHESIS]);
}

/** Requests the api answered, by status class, from its own RED metrics. */
async function requestsCounted(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^http_server_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
    const status = /status(?:_class)?="([^"]+)"/.exec(m[1])?.[1] ?? '?';
    out[status] = (out[status] ?? 0) + Number(m[2]);
  }
  return out;
}

function runSchemathesis(base: string, token: string, examples: number, seed: number): Promise<{ code: number; output: string }> {
  const args = ['run', `${base}/api/docs-json`, '--checks', 'all', '--header', `Authorization: Bearer ${token}`, '--max-examples', String(examples), '--seed', String(seed), '--no-color', '--workers', '2'];
  return new Promise((resolve, reject) => {
    // Schemathesis keeps its example database in the working directory: .local/, which git ignores.
    const child = spawn(ST, args, { cwd: join(ROOT_DIR, '.local'), env: { ...process.env, SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: join(ROOT_DIR, 'bench', 'fuzz') }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      process.stdout.write(c);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Failures by check, from the "Failures:" block of schemathesis's summary ("❌ ST202 Schema-valid request rejected: 6"). */
function failuresByCheck(summary: string): Record<string, number> {
  const block = /^Failures:\n((?:[ \t]+\S.*\n?)*)/m.exec(summary)?.[1] ?? '';
  const out: Record<string, number> = {};
  for (const m of block.matchAll(/^\s*\S+\s+(.+?):\s+(\d+)\s*$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

async function main(): Promise<void> {
  const args = flags(process.argv.slice(2));
  installSchemathesis();
  const stack = args.url ? undefined : await Stack.start({ roles: ['api'], adminToken: args.token, env: FUZZ_ENV });
  const base = args.url ?? `http://127.0.0.1:${stack?.port('api')}`;
  try {
    const before = await requestsCounted(base);
    const started = Date.now();
    const { code, output } = await runSchemathesis(base, args.token, args.examples, args.seed);
    const after = await requestsCounted(base);
    const byStatus = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));
    const requests = Object.values(byStatus).reduce((a, b) => a + b, 0);
    const summary = output.slice(output.lastIndexOf('SUMMARY') >= 0 ? output.lastIndexOf('SUMMARY') : Math.max(0, output.length - 4000));
    const failures = failuresByCheck(summary);
    const md = [
      `# fuzz: schemathesis (${SCHEMATHESIS}) against the api's OpenAPI document`,
      '',
      `- target: ${args.url ? args.url : 'the built api role (e2e Stack)'}; seed ${args.seed}; --max-examples ${args.examples}; every check; ${Math.round((Date.now() - started) / 1000)} s; exit ${code}`,
      `- requests the api counted: ${requests}`,
      '',
      markdownTable(['status', 'requests'], Object.entries(byStatus).sort().map(([s, n]) => [s, n])),
      '',
      '## Failures by check',
      '',
      Object.keys(failures).length > 0 ? markdownTable(['check', 'failures'], Object.entries(failures).map(([c, n]) => [c, n])) : 'none: every check passed',
      '',
      '## Summary as schemathesis printed it',
      '',
      '```',
      summary.trim(),
      '```',
    ].join('\n');
    const path = writeResults('fuzz', { seed: args.seed, examples: args.examples, exitCode: code, requests, byStatus, failures }, md);
    process.stdout.write(`\nrequests: ${requests}; written ${path}.md\n`);
    process.exitCode = code;
  } finally {
    await stack?.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
