import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { nextSecond, pollUntil, Receiver, Stack } from '../support';

// Fire traces end to end (docs/operations.md, "Tracing"): with TIMER_OTLP_ENDPOINT set, a fire's
// callback carries a `traceparent` whose trace holds the trigger's publish span and the executor's
// admit, callback and outcome spans, as the roles export them to a collector; a retry of the fire is
// called in the same trace.
jest.setTimeout(180_000);

const APP = 'e2e-tracing';

interface ExportedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

/** A collector on 127.0.0.1 recording the spans posted to `/v1/traces` (OTLP/HTTP, JSON as the exporter sends it). */
class Collector {
  readonly spans: ExportedSpan[] = [];
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<Collector> {
    const holder: { c?: Collector } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') holder.c!.record(JSON.parse(Buffer.concat(chunks).toString()) as OtlpTraces);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.c = new Collector(server, (server.address() as AddressInfo).port);
    return holder.c;
  }

  trace(traceId: string): ExportedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(body: OtlpTraces): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '';
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) this.spans.push({ service, name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '' });
      }
    }
  }
}

interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[];
  }[];
}

let stack: Stack;
let receiver: Receiver;
let collector: Collector;

beforeAll(async () => {
  collector = await Collector.start();
  receiver = await Receiver.start({ keepBodies: true });
  // NODE_PATH: the roles resolve packages as this runner does.
  const env: Record<string, string> = { TIMER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, ...(process.env.NODE_PATH ? { NODE_PATH: process.env.NODE_PATH } : {}) };
  stack = await Stack.start({ env });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  await collector?.close();
});

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

it('a fire is one trace from the trigger through its callbacks (a retry included) to its outcome', async () => {
  // Far enough ahead that the trigger's walk publishes it (not the api's enable).
  const runAt = nextSecond(15_000);
  const timerId = await stack.api.createEnabled({
    app: APP,
    name: 'traced',
    every: '1s',
    startAt: new Date(runAt).toISOString(),
    maxFires: 1,
    retryPolicy: { maxAttempts: 2, backoffMs: 1_000 },
    notifyHTTPParam: { url: receiver.url('/traced'), method: 'POST' },
  });
  receiver.respond((d) => (d.timerId === timerId && d.attempt === 1 ? { status: 500 } : undefined));
  const calls = await pollUntil(() => {
    const mine = receiver.deliveries.filter((d) => d.timerId === timerId && d.status !== 0);
    return mine.length >= 2 ? mine : undefined;
  }, 60_000);
  if (!calls) throw new Error(`the fire was not called twice: ${JSON.stringify(receiver.deliveries.filter((d) => d.timerId === timerId))}`);
  expect(calls.map((d) => [d.attempt, d.status])).toEqual([
    [1, 500],
    [2, 200],
  ]);
  const [first, second] = calls.map((d) => TRACEPARENT.exec(String(d.headers?.traceparent)));
  expect(first).not.toBeNull();
  expect(second).not.toBeNull();
  const traceId = first![1];
  expect(second![1]).toBe(traceId); // the retry continues the fire's trace
  expect(second![2]).not.toBe(first![2]); // from a span of its own

  const names = (service: string) => collector.trace(traceId).filter((s) => s.service === service).map((s) => s.name);
  await pollUntil(() => names('timer-executor').filter((n) => n === 'timer.fire.outcome').length >= 2 || undefined, 20_000);
  expect(names('timer-trigger')).toEqual(['timer.fire.publish']);
  expect(names('timer-executor').sort()).toEqual(['timer.fire.admit', 'timer.fire.admit', 'timer.fire.callback', 'timer.fire.callback', 'timer.fire.outcome', 'timer.fire.outcome']);
  // Each callback's `traceparent` names the executor's callback span of that attempt.
  const callbackSpans = collector.trace(traceId).filter((s) => s.name === 'timer.fire.callback').map((s) => s.spanId);
  expect(callbackSpans.sort()).toEqual([first![2], second![2]].sort());
  // The executor's spans hang under the trigger's publish span.
  const publish = collector.trace(traceId).find((s) => s.service === 'timer-trigger')!;
  expect(collector.trace(traceId).filter((s) => s.service === 'timer-executor').every((s) => s.parentSpanId === publish.spanId)).toBe(true);
});
