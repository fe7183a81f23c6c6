import { Context, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace, Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { TracingSettings } from '../config/role-config';
import { FireSpan, FireSpanKind, Tracing } from './fire-tracing';

const KINDS: Record<FireSpanKind, SpanKind> = {
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Spans are queued and exported in batches off the fires' path, so a fire pays for its spans' objects
 * only. At thousands of fires a second a slow or absent collector makes the queue drop spans (never
 * fires): the queue holds a few seconds of a busy executor (three spans a fire).
 */
const BATCHING = { maxQueueSize: 32_768, maxExportBatchSize: 2_048, scheduledDelayMillis: 1_000, exportTimeoutMillis: 10_000 };

/** {@link Tracing} exported over OTLP/HTTP (JSON) by a batch span processor. Not registered globally: only the fire spans use it. */
export class OtlpTracing extends Tracing {
  readonly enabled = true;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(serviceName: string, settings: TracingSettings) {
    super();
    const exporter = new OTLPTraceExporter({ url: settings.url, headers: settings.headers });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, BATCHING)],
    });
    this.tracer = this.provider.getTracer('timer');
  }

  start(name: string, parent: string | undefined, kind: FireSpanKind, attributes: Record<string, string | number>): FireSpan {
    const span = this.tracer.startSpan(name, { kind: KINDS[kind], attributes }, parent ? contextOf(parent) : ROOT_CONTEXT);
    return new OtlpSpan(span);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

class OtlpSpan implements FireSpan {
  readonly traceparent: string;

  constructor(private readonly span: Span) {
    const c = span.spanContext();
    this.traceparent = `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  }

  setAttribute(name: string, value: string | number): void {
    this.span.setAttribute(name, value);
  }

  end(error?: string): void {
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}

/** The remote parent a `traceparent` names; the root context (a new trace) when it names none. */
function contextOf(traceparent: string): Context {
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return ROOT_CONTEXT;
  const parent = { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
  return trace.isSpanContextValid(parent) ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}
