import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT_DIR } from './stack';

export interface ScriptRun {
  status: number | null;
  output: string;
  ms: number;
}

/**
 * Runs a script of deploy/local (e.g. `pulsar.sh restart`) as a child process, so the caller's event
 * loop (a receiver in the same process) keeps serving meanwhile; SIGTERM after timeoutMs.
 */
export function localScript(script: string, args: string[], timeoutMs = 180_000): Promise<ScriptRun> {
  return runToExit('bash', [join(ROOT_DIR, 'deploy/local', script), ...args], { timeoutMs });
}

/**
 * Runs a command from the checkout's root until it exits, without blocking the caller's event loop;
 * stdout and stderr together in `output`; `signal` (default SIGTERM) after timeoutMs.
 */
export function runToExit(
  command: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; signal?: NodeJS.Signals } = {},
): Promise<ScriptRun> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT_DIR, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill(opts.signal ?? 'SIGTERM'), opts.timeoutMs ?? 180_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, output, ms: Date.now() - t0 });
    });
  });
}
