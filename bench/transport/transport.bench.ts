/**
 * Transport benchmark for @timer/pulsar against a real broker (not a test).
 *
 *   npm run bench:transport -- [--rate 5000] [--duration 20] [--size 200] [--mode both|throughput|latency]
 *                              [--producers 1] [--connections 2] [--consumers 2] [--batching] [--warmup 3]
 *                              [--url http://127.0.0.1:8080]
 *
 * (a) throughput: publish -> consume -> ack as fast as it goes (bounded backlog) for --duration s;
 * (b) latency: publish at a fixed --rate for --duration s; publish call -> consumer receive, from a
 *     timestamp in the payload (one process, one clock).
 * Prints progress every 2 s; writes bench/results/transport-<timestamp>.json and .md.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { topicName, WsPulsarClient, type Consumer, type Producer, type ReceivedMessage } from '@timer/pulsar';

interface Args {
  url: string;
  rate: number;
  duration: number;
  size: number;
  mode: 'both' | 'throughput' | 'latency';
  producers: number;
  connections: number;
  consumers: number;
  batching: boolean;
  warmup: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    url: process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080',
    rate: 5000,
    duration: 20,
    size: 200,
    mode: 'both',
    producers: 1,
    connections: 2,
    consumers: 2,
    batching: false,
    warmup: 3,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const name = flag.replace(/^--/, '');
    if (name === 'batching') {
      args.batching = inline === undefined ? true : inline !== 'false';
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    switch (name) {
      case 'url':
        args.url = value;
        break;
      case 'mode':
        if (value !== 'both' && value !== 'throughput' && value !== 'latency') throw new Error(`bad --mode ${value}`);
        args.mode = value;
        break;
      case 'rate':
      case 'duration':
      case 'size':
      case 'producers':
      case 'connections':
      case 'consumers':
      case 'warmup': {
        const n = Number(value);
        if (!Number.isFinite(n) || n < 0) throw new Error(`bad ${flag} ${value}`);
        args[name] = n;
        break;
      }
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  if (args.size < 16) throw new Error('--size must be >= 16 (the payload carries a timestamp and a sequence number)');
  return args;
}

const nowMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds used by this process and, when it runs on this machine, by the broker's JVM. */
class CpuMeter {
  private readonly brokerPid = findBrokerPid();
  private lastSelf = process.cpuUsage();
  private lastBroker = this.brokerTicks();
  private lastAt = performance.now();

  /** CPU use since the previous call, in % of one core. */
  sample(): { client: number; broker: number | undefined } {
    const now = performance.now();
    const wall = (now - this.lastAt) / 1000;
    const self = process.cpuUsage(this.lastSelf);
    const broker = this.brokerTicks();
    const result = {
      client: ((self.user + self.system) / 1e6 / wall) * 100,
      broker: broker !== undefined && this.lastBroker !== undefined ? ((broker - this.lastBroker) / 100 / wall) * 100 : undefined,
    };
    this.lastSelf = process.cpuUsage();
    this.lastBroker = broker;
    this.lastAt = now;
    return result;
  }

  private brokerTicks(): number | undefined {
    if (this.brokerPid === undefined) return undefined;
    try {
      // utime and stime, in clock ticks (100/s on Linux); the name field may hold spaces, so split after ')'.
      const fields = readFileSync(`/proc/${this.brokerPid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return undefined;
    }
  }
}

function findBrokerPid(): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('PulsarStandaloneStarter')) return Number(entry);
      } catch {
        // process went away
      }
    }
  } catch {
    // no /proc
  }
  return undefined;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (n: number, digits = 2): number => Number(n.toFixed(digits));
const k = (n: number): string => `${(n / 1000).toFixed(1)}k`;

async function openPipeline(
  client: WsPulsarClient,
  args: Args,
  topic: string,
  onMessage: (m: ReceivedMessage) => void,
): Promise<{ producers: Producer[]; consumers: Consumer[] }> {
  const consumers: Consumer[] = [];
  for (let i = 0; i < args.consumers; i++) {
    consumers.push(
      await client.subscribe({
        topic,
        subscription: 'bench',
        subscriptionType: 'Shared',
        receiverQueueSize: 1000,
        listener: (m, c) => {
          onMessage(m);
          c.acknowledge(m).catch(() => undefined); // rejects only if closed first: redelivered anyway
        },
      }),
    );
  }
  const producers: Producer[] = [];
  for (let i = 0; i < args.producers; i++) {
    producers.push(
      await client.createProducer({
        topic,
        connections: args.connections,
        maxPendingMessages: 1000 * args.connections,
        batchingEnabled: args.batching,
      }),
    );
  }
  return { producers, consumers };
}

interface ThroughputResult {
  sustainedMsgPerSec: number;
  publishedMsgPerSec: number;
  minWindowMsgPerSec: number;
  measuredSeconds: number;
  consumed: number;
  sendErrors: number;
  avgClientCpuPct: number;
  avgBrokerCpuPct: number | undefined;
}

async function throughput(client: WsPulsarClient, args: Args): Promise<ThroughputResult> {
  const topic = topicName('public', 'default', `bench-throughput-${Date.now().toString(36)}`);
  let consumed = 0;
  const { producers } = await openPipeline(client, args, topic, () => consumed++);
  const payload = Buffer.alloc(args.size, 'x');
  const maxBacklog = 5_000;
  const perProducerWindow = 1000 * args.connections;
  let sent = 0;
  let acked = 0;
  let errors = 0;
  let publishing = true;
  const inFlight = producers.map(() => 0);
  const pump = (index: number): void => {
    const p = producers[index];
    while (publishing && inFlight[index] < perProducerWindow && sent - consumed < maxBacklog) {
      sent++;
      inFlight[index]++;
      p.send({ payload }).then(
        () => {
          acked++;
          inFlight[index]--;
          pump(index);
        },
        () => {
          errors++;
          inFlight[index]--;
        },
      );
    }
  };
  const pumpAll = (): void => producers.forEach((_, i) => pump(i));
  const refill = setInterval(pumpAll, 2);
  pumpAll();

  const cpu = new CpuMeter();
  const total = args.warmup + args.duration;
  const started = performance.now();
  let measureStart = { consumed: 0, acked: 0, at: 0 };
  let last = { consumed: 0, at: started };
  let minWindow = Infinity;
  const cpuSamples: Array<{ client: number; broker: number | undefined }> = [];
  for (let t = 2; t <= Math.ceil(total / 2) * 2; t += 2) {
    await sleep(started + t * 1000 - performance.now());
    const at = performance.now();
    const rate = ((consumed - last.consumed) * 1000) / (at - last.at);
    const usage = cpu.sample();
    const measuring = t > args.warmup;
    if (measuring) {
      minWindow = Math.min(minWindow, rate);
      cpuSamples.push(usage);
    }
    if (t >= args.warmup && measureStart.at === 0) measureStart = { consumed, acked, at };
    console.log(
      `[throughput] ${String(t).padStart(3)}s ${measuring ? '' : '(warm-up) '}consume+ack ${k(rate)}/s, published ${k(acked)} total, ` +
        `backlog ${sent - consumed}, client cpu ${usage.client.toFixed(0)}%, broker cpu ${usage.broker?.toFixed(0) ?? 'n/a'}%`,
    );
    last = { consumed, at };
  }
  const end = performance.now();
  publishing = false;
  clearInterval(refill);
  const seconds = (end - measureStart.at) / 1000;
  const result: ThroughputResult = {
    sustainedMsgPerSec: Math.round((consumed - measureStart.consumed) / seconds),
    publishedMsgPerSec: Math.round((acked - measureStart.acked) / seconds),
    minWindowMsgPerSec: Math.round(minWindow),
    measuredSeconds: round(seconds, 1),
    consumed,
    sendErrors: errors,
    avgClientCpuPct: round(avg(cpuSamples.map((s) => s.client)), 0),
    avgBrokerCpuPct: cpuSamples.some((s) => s.broker === undefined) ? undefined : round(avg(cpuSamples.map((s) => s.broker!)), 0),
  };
  const drainUntil = Date.now() + 15_000;
  while (consumed < acked && Date.now() < drainUntil) await sleep(50);
  return result;
}

interface LatencyResult {
  targetRate: number;
  achievedRate: number;
  samples: number;
  lost: number;
  publishToReceiveMs: { p50: number; p95: number; p99: number; p999: number; max: number; mean: number };
  publishToAckMs: { p50: number; p95: number; p99: number; max: number };
  avgClientCpuPct: number;
  avgBrokerCpuPct: number | undefined;
}

async function latency(client: WsPulsarClient, args: Args): Promise<LatencyResult> {
  const topic = topicName('public', 'default', `bench-latency-${Date.now().toString(36)}`);
  const total = Math.ceil(args.rate * (args.warmup + args.duration));
  const warmupCount = Math.ceil(args.rate * args.warmup);
  const receiveLatency = new Float64Array(total);
  const ackLatency = new Float64Array(total);
  const seen = new Uint8Array(total);
  let received = 0;
  let measuredReceived = 0;
  let windowMax = 0;
  const { producers } = await openPipeline(client, args, topic, (m) => {
    const sentAt = m.payload.readDoubleLE(0);
    const seq = m.payload.readUInt32LE(8);
    received++;
    if (seq >= total || seen[seq]) return;
    seen[seq] = 1;
    const ms = nowMs() - sentAt;
    receiveLatency[seq] = ms;
    if (seq >= warmupCount) {
      measuredReceived++;
      windowMax = Math.max(windowMax, ms);
    }
  });
  const filler = Buffer.alloc(args.size, 'x');
  let sent = 0;
  let acked = 0;
  const started = performance.now();
  const tick = setInterval(() => {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * args.rate));
    while (sent < due) {
      const seq = sent++;
      const payload = Buffer.from(filler);
      const at = nowMs();
      payload.writeDoubleLE(at, 0);
      payload.writeUInt32LE(seq, 8);
      producers[seq % producers.length].send({ payload }).then(
        () => {
          ackLatency[seq] = nowMs() - at;
          acked++;
        },
        () => undefined,
      );
    }
  }, 1);

  const cpu = new CpuMeter();
  const cpuSamples: Array<{ client: number; broker: number | undefined }> = [];
  let last = { received: 0, at: started };
  const seconds = args.warmup + args.duration;
  for (let t = 2; t <= Math.ceil(seconds / 2) * 2; t += 2) {
    await sleep(started + t * 1000 - performance.now());
    const at = performance.now();
    const usage = cpu.sample();
    if (t > args.warmup) cpuSamples.push(usage);
    console.log(
      `[latency ${args.rate}/s] ${String(t).padStart(3)}s ${t > args.warmup ? '' : '(warm-up) '}received ${k(((received - last.received) * 1000) / (at - last.at))}/s, ` +
        `window max ${windowMax.toFixed(1)} ms, client cpu ${usage.client.toFixed(0)}%, broker cpu ${usage.broker?.toFixed(0) ?? 'n/a'}%`,
    );
    windowMax = 0;
    last = { received, at };
  }
  clearInterval(tick);
  const drainUntil = Date.now() + 10_000;
  while ((measuredReceived < sent - warmupCount || acked < sent) && Date.now() < drainUntil) await sleep(50);

  const measured = receiveLatency.slice(warmupCount).filter((_, i) => seen[warmupCount + i] === 1).sort();
  const acks = ackLatency.slice(warmupCount).filter((v) => v > 0).sort();
  return {
    targetRate: args.rate,
    achievedRate: Math.round((total - warmupCount) / args.duration),
    samples: measured.length,
    // Sent and never received (the rate loop may stop a few messages short of `total`: not lost).
    lost: sent - warmupCount - measured.length,
    publishToReceiveMs: {
      p50: round(percentile(measured, 50)),
      p95: round(percentile(measured, 95)),
      p99: round(percentile(measured, 99)),
      p999: round(percentile(measured, 99.9)),
      max: round(measured[measured.length - 1] ?? NaN),
      mean: round(avg(Array.from(measured))),
    },
    publishToAckMs: {
      p50: round(percentile(acks, 50)),
      p95: round(percentile(acks, 95)),
      p99: round(percentile(acks, 99)),
      max: round(acks[acks.length - 1] ?? NaN),
    },
    avgClientCpuPct: round(avg(cpuSamples.map((s) => s.client)), 0),
    avgBrokerCpuPct: cpuSamples.some((s) => s.broker === undefined) ? undefined : round(avg(cpuSamples.map((s) => s.broker!)), 0),
  };
}

function avg(values: number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function markdown(report: Report): string {
  const lines = [
    `# Transport benchmark ${report.startedAt}`,
    '',
    `Broker ${report.args.url}; ${report.machine.cpus} CPUs (${report.machine.cpuModel}); Node ${report.machine.node}.`,
    `Payload ${report.args.size} B; ${report.args.producers} producer(s) x ${report.args.connections} session(s); ` +
      `${report.args.consumers} Shared consumer(s); proxy batching ${report.args.batching ? 'on' : 'off'}; ` +
      `${report.args.duration} s measured after ${report.args.warmup} s warm-up.`,
    '',
  ];
  if (report.throughput) {
    const t = report.throughput;
    lines.push(
      '## Throughput (publish -> consume -> ack)',
      '',
      `| sustained msg/s | slowest 2 s window | published msg/s | client CPU | broker CPU | target |`,
      `|---|---|---|---|---|---|`,
      `| ${t.sustainedMsgPerSec} | ${t.minWindowMsgPerSec} | ${t.publishedMsgPerSec} | ${t.avgClientCpuPct}% | ${t.avgBrokerCpuPct ?? 'n/a'}% | >= 20000: ${t.sustainedMsgPerSec >= 20000 ? 'met' : 'NOT met'} |`,
      '',
    );
  }
  if (report.latency) {
    const l = report.latency;
    const r = l.publishToReceiveMs;
    lines.push(
      `## Latency at ${l.targetRate} msg/s (publish call -> consumer receive)`,
      '',
      `| p50 | p95 | p99 | p99.9 | max | samples | lost | publish->ack p99 | client CPU | broker CPU | target |`,
      `|---|---|---|---|---|---|---|---|---|---|---|`,
      `| ${r.p50} ms | ${r.p95} ms | ${r.p99} ms | ${r.p999} ms | ${r.max} ms | ${l.samples} | ${l.lost} | ${l.publishToAckMs.p99} ms | ${l.avgClientCpuPct}% | ${l.avgBrokerCpuPct ?? 'n/a'}% | p99 < 50 ms: ${r.p99 < 50 ? 'met' : 'NOT met'} |`,
      '',
    );
  }
  lines.push('CPU figures are % of one core (the machine has ' + report.machine.cpus + ').', '');
  return lines.join('\n');
}

interface Report {
  startedAt: string;
  args: Args;
  machine: { cpus: number; cpuModel: string; node: string };
  throughput?: ThroughputResult;
  latency?: LatencyResult;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const report: Report = {
    startedAt: new Date().toISOString(),
    args,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
  };
  console.log(`transport bench: ${JSON.stringify(args)}`);
  const client = new WsPulsarClient({
    serviceUrl: args.url,
    logger: { log: () => undefined, warn: (m) => console.warn(`warn: ${m}`), error: (m) => console.error(`error: ${m}`) },
  });
  try {
    if (args.mode !== 'latency') {
      report.throughput = await throughput(client, args);
      console.log(`throughput: ${JSON.stringify(report.throughput)}`);
    }
    if (args.mode !== 'throughput') {
      report.latency = await latency(client, args);
      console.log(`latency: ${JSON.stringify(report.latency)}`);
    }
  } finally {
    await client.close();
  }
  const dir = join(process.cwd(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `transport-${report.startedAt.replace(/[:.]/g, '-')}`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${base}.md`, markdown(report));
  console.log(`\n${markdown(report)}\nwritten: ${base}.json, ${base}.md`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
