import { readFileSync } from 'fs';
import { join } from 'path';
import { registeredInCode, ROOT } from './support/registered-metrics';

// The dashboard must only query metrics the roles export, so it cannot silently go blank after a rename.
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/timer-dashboard.json'), 'utf8')) as {
  uid: string;
  panels: { title: string; targets: { expr: string }[] }[];
};

// prom-client's default process and Node.js metrics, registered with the `timer_` prefix.
const DEFAULT_METRICS = /^timer_(process_|nodejs_)/;

describe('Grafana dashboard', () => {
  it('has panels with queries', () => {
    expect(dashboard.uid).toBe('timer-service');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    for (const p of dashboard.panels) expect(p.targets.length).toBeGreaterThan(0);
  });

  it('queries only metrics that exist in the code', () => {
    const names = new Set(
      dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/timer_[a-z0-9_]+/g) ?? [])).map((n) => n.replace(/_(bucket|sum|count)$/, '')),
    );
    const missing = [...names].filter((n) => !DEFAULT_METRICS.test(n) && !registeredInCode(n));
    expect(missing).toEqual([]);
    expect(names.size).toBeGreaterThan(15);
  });
});
