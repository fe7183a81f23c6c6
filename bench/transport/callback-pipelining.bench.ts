/**
 * What HTTP/1.1 pipelining would save the executor's callbacks (issue 11; a command, not a test):
 *
 *   node scripts/run-ts.js bench/transport/callback-pipelining.bench.ts [--rate 5000] [--seconds 8] [--reps 2]
 *
 * An undici Agent sends `--rate` POSTs at each whole second, as the executor's bursts go out, to a Node
 * http receiver in a child process, in three settings: today's (64 connections an origin, no
 * pipelining), and 8 connections pipelined 8 and 32 deep (undici pipelines a POST only when it is
 * marked idempotent). Prints the sender's and the receiver's CPU µs a request. Run it under the suite
 * lock: it measures CPU on the shared cores.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { Agent, Dispatcher } from 'undici';
import { numericFlags } from '../../e2e/support';

const DEFAULTS = { rate: 5000, seconds: 8, reps: 2 };

/** The receiver: answers 200 "ok" after reading the body; reports its CPU when asked over IPC. */
const RECEIVER = `
const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.statusCode = 200; res.end('ok'); }); });
s.keepAliveTimeout = 30000;
s.listen(0, '127.0.0.1', () => process.send({ port: s.address().port }));
process.on('message', () => process.send({ cpu: process.cpuUsage() }));
`;

interface Setting {
  connections: number;
  pipelining: number;
}

const SETTINGS: Setting[] = [
  { connections: 64, pipelining: 1 },
  { connections: 8, pipelining: 8 },
  { connections: 8, pipelining: 32 },
];

function next<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => child.once('message', (m) => resolve(m as T)));
}

async function cpuOf(child: ChildProcess): Promise<NodeJS.CpuUsage> {
  const answer = next<{ cpu: NodeJS.CpuUsage }>(child);
  child.send('cpu');
  return (await answer).cpu;
}

const micros = (u: NodeJS.CpuUsage): number => u.user + u.system;

async function run(setting: Setting, args: typeof DEFAULTS): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await next<{ port: number }>(child);
  const agent = new Agent({ connections: setting.connections, pipelining: setting.pipelining, keepAliveTimeout: 30_000 });
  const origin = `http://127.0.0.1:${port}`;
  const body = JSON.stringify({ hello: 'world', n: 1 });
  let failed = 0;
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const handler: Dispatcher.DispatchHandler = {
        onConnect: () => undefined,
        onHeaders: () => true,
        onData: () => true,
        onComplete: () => resolve(),
        onError: () => {
          failed++;
          resolve();
        },
      };
      const headers = { 'content-type': 'application/json', 'x-timer-id': '123456789', 'x-timer-fire-id': `123456789-${i}`, 'x-timer-attempt': '1', 'user-agent': 'timer-service/0.1' };
      agent.dispatch({ origin, path: '/hook', method: 'POST', idempotent: setting.pipelining > 1, headers, body }, handler);
    });
  await Promise.all(Array.from({ length: 2_000 }, (_, i) => one(i))); // connections open, code warm
  const sender0 = process.cpuUsage();
  const receiver0 = await cpuOf(child);
  const t0 = Date.now();
  for (let s = 0; s < args.seconds; s++) {
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + s * 1000 - Date.now())));
    await Promise.all(Array.from({ length: args.rate }, (_, i) => one(s * args.rate + i)));
  }
  const sender = process.cpuUsage(sender0);
  const receiver = micros(await cpuOf(child)) - micros(receiver0);
  const n = args.rate * args.seconds;
  await agent.close();
  child.kill();
  return { ...setting, requests: n, failed, senderUs: +(micros(sender) / n).toFixed(1), senderSystemUs: +(sender.system / n).toFixed(1), receiverUs: +(receiver / n).toFixed(1) };
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  for (let rep = 1; rep <= args.reps; rep++) {
    for (const setting of SETTINGS) process.stdout.write(`${JSON.stringify({ rep, ...(await run(setting, args)) })}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
