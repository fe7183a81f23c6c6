import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';
import { baseName, defaultMetricNames, metricNames, registeredInCode, ROOT } from './support/registered-metrics';

// The dashboard must only query metrics the roles export, so it cannot silently go blank after a
// rename, and it must have a panel for every alert, so whoever is paged finds the alert's signal.
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/timer-dashboard.json'), 'utf8')) as {
  uid: string;
  panels: { title: string; targets: { expr: string }[] }[];
};
const alerts = (parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap(
  (g) => g.rules,
);

// Metrics of other exporters (docs/operations.md says which).
const EXTERNAL_METRICS = ['up', 'kube_deployment_status_replicas_available', 'pulsar_subscription_back_log'];

describe('Grafana dashboard', () => {
  it('has panels with queries', () => {
    expect(dashboard.uid).toBe('timer-service');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    for (const p of dashboard.panels) expect(p.targets.length).toBeGreaterThan(0);
  });

  it('queries only metrics that exist in the code, the default process metrics, or the documented external ones', () => {
    const names = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr))).map(baseName));
    const defaults = defaultMetricNames();
    const missing = [...names].filter((n) => !registeredInCode(n) && !defaults.has(n) && !EXTERNAL_METRICS.includes(n));
    expect(missing).toEqual([]);
    expect(names.size).toBeGreaterThan(15);
    // The api's RED metrics and the unprefixed default metrics are on it.
    for (const n of ['http_server_request_duration_seconds', 'timer_api_rate_limited_total', 'timer_api_auth_failures_total', 'process_cpu_seconds_total']) {
      expect([n, names.has(n)]).toEqual([n, true]);
    }
  });

  it('has a panel per alert, titled after it, that queries every metric of the alert', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(7);
    for (const a of alerts) {
      const panels = dashboard.panels.filter((p) => p.title.startsWith(`${a.alert}: `));
      expect([a.alert, panels.length]).toEqual([a.alert, 1]);
      const queried = new Set(panels[0].targets.flatMap((t) => metricNames(t.expr)).map(baseName));
      const needed = [...new Set(metricNames(a.expr).map(baseName))];
      expect([a.alert, needed.filter((n) => !queried.has(n))]).toEqual([a.alert, []]);
    }
  });
});
