import { NO_TRACING } from './fire-tracing';
import { createTracing } from './tracing';

describe('createTracing', () => {
  it('is the no-op tracing without an endpoint, and loads no OpenTelemetry module', async () => {
    expect(await createTracing('executor', undefined)).toBe(NO_TRACING);
    expect(NO_TRACING.enabled).toBe(false);
    expect(Object.keys(require.cache).filter((m) => m.includes('@opentelemetry') || m.includes('otlp-tracing'))).toEqual([]);
  });

  // The spans are left open: exporting them is the e2e test's (e2e/test/tracing.e2e-spec.ts).
  it('starts a new trace, or continues the one a traceparent names', async () => {
    const tracing = await createTracing('trigger', { url: 'http://127.0.0.1:9/v1/traces', headers: {} });
    try {
      expect(tracing.enabled).toBe(true);
      const root = tracing.start('timer.fire.publish', undefined, 'producer', { 'timer.fire_id': '1-1000' });
      const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(root.traceparent) ?? [];
      expect(traceId).toBeDefined();
      const child = tracing.start('timer.fire.admit', root.traceparent, 'consumer', {});
      expect(child.traceparent).toMatch(new RegExp(`^00-${traceId}-(?!${spanId})[0-9a-f]{16}-01$`));
      // A malformed parent starts a new trace rather than failing the fire.
      expect(tracing.start('timer.fire.admit', 'garbage', 'consumer', {}).traceparent).not.toContain(traceId);
    } finally {
      await tracing.onApplicationShutdown();
    }
  });
});
