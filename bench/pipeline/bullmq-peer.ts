import { execFileSync } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';
import type Redis from 'ioredis';

// BullMQ is the benchmark's peer, not a dependency of the service: its lockfile entries need
// platform packages (msgpackr-extract for macOS/Windows) that the registry reachable here does not
// serve, which makes `npm ci` refuse the whole lockfile. It is installed on first use into a
// git-ignored folder instead. Only the parts the benchmark calls are typed here.

export interface BullJob {
  data: unknown;
  attemptsMade: number;
}

export interface BullQueue {
  addBulk(jobs: { name: string; data: unknown; opts?: Record<string, unknown> }[]): Promise<unknown>;
  obliterate(opts: { force: boolean }): Promise<void>;
  close(): Promise<void>;
}

export interface BullWorker {
  close(): Promise<void>;
}

export interface BullMQ {
  Queue: new (name: string, opts: { connection: Redis; prefix: string }) => BullQueue;
  Worker: new (
    name: string,
    processor: (job: BullJob) => Promise<void>,
    opts: { connection: Redis; prefix: string; concurrency: number; drainDelay?: number },
  ) => BullWorker;
}

const VERSION = '5';

/** Loads BullMQ from `.local/peers`, installing it there with npm the first time. */
export function loadBullmq(root: string): BullMQ {
  const dir = join(root, '.local', 'peers');
  const entry = join(dir, 'node_modules', 'bullmq');
  if (!existsSync(entry)) {
    process.stderr.write(`installing the benchmark peer bullmq@${VERSION} into ${dir}\n`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', `bullmq@${VERSION}`], { stdio: 'inherit' });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(entry) as BullMQ;
}
