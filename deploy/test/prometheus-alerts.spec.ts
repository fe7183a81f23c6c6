import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';
import { baseName, defaultMetricNames, metricNames, registeredInCode, ROOT } from './support/registered-metrics';

// The alerting rules (deploy/prometheus/alerts.yml, shipped by the chart from helm/timer/files/alerts.yml):
// the copies must be identical, every alert needs a runbook entry, and the rules may only use metrics
// the roles export. With TIMER_PROMTOOL_BIN (deploy/local/promtool.sh builds it) the rules are also
// checked and unit-tested by promtool against the series of deploy/prometheus/alerts.test.yml.
jest.setTimeout(120_000);

const RULES = join(ROOT, 'deploy/prometheus/alerts.yml');
const CHART_COPY = join(ROOT, 'helm/timer/files/alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yml');

type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string>; annotations: Record<string, string> };
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

// Metrics of other exporters the rules rely on (docs/operations.md says which).
const EXTERNAL_METRICS = ['up', 'kube_deployment_status_replicas_available', 'pulsar_subscription_back_log'];
// The alerts issue 13 asks for; more may be added, none of these removed.
const REQUIRED = [
  'TimerRoleDown',
  'TimerMissedFires',
  'TimerOverdueFires',
  'TimerFireLatenessSLOBurn',
  'TimerDeadLettersGrowing',
  'TimerExecutorBacklog',
  'TimerMigratorWindowAge',
];

describe('Prometheus alerting rules', () => {
  it('are the same in deploy/prometheus and in the chart', () => {
    // Fix: cp deploy/prometheus/alerts.yml helm/timer/files/alerts.yml
    expect(readFileSync(CHART_COPY, 'utf8')).toBe(readFileSync(RULES, 'utf8'));
  });

  it('cover the alerts the service needs, each with a severity, a summary and a runbook entry', () => {
    const names = rules.map((r) => r.alert);
    expect(names).toEqual(expect.arrayContaining(REQUIRED));
    expect(new Set(names).size).toBe(names.length);
    const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    for (const r of rules) {
      expect([r.alert, r.labels.severity]).toEqual([r.alert, expect.stringMatching(/^(warning|critical)$/)]);
      expect(r.annotations.summary).toBeTruthy();
      expect(r.annotations.runbook_url).toBe(`docs/operations.md#${r.alert.toLowerCase()}`);
      // GitHub's anchor of a `### TimerRoleDown` heading is `timerroledown`.
      expect(operations).toMatch(new RegExp(`^### ${r.alert}$`, 'm'));
    }
  });

  it('use only metrics the roles export (or the documented external ones)', () => {
    const names = new Set(rules.flatMap((r) => metricNames(r.expr)).map(baseName));
    const timer = [...names].filter((n) => n.startsWith('timer_'));
    const missing = timer.filter((n) => !registeredInCode(n));
    expect(missing).toEqual([]);
    const defaults = defaultMetricNames();
    expect([...names].filter((n) => !n.startsWith('timer_') && !defaults.has(n) && !EXTERNAL_METRICS.includes(n))).toEqual([]);
    expect(timer.length).toBeGreaterThanOrEqual(6);
  });

  it('finds the metric names of an expression', () => {
    // The check above is only as good as this extraction.
    expect(metricNames('sum by (namespace, role) (rate(timer_a_total{le="1000", x=~"a|b"}[5m])) / on (role) timer_b > 0 and up == 1')).toEqual(['timer_a_total', 'timer_b', 'up']);
  });

  const promtool = process.env.TIMER_PROMTOOL_BIN;
  (promtool ? it : it.skip)('pass promtool check rules and the rule unit tests in alerts.test.yml', () => {
    const run = (...args: string[]) => execFileSync(promtool as string, args, { encoding: 'utf8', cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run('check', 'rules', RULES)).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    const tested = run('test', 'rules', RULE_TESTS);
    expect(tested).toMatch(/SUCCESS/);
    // Every alert has at least one test that expects it to fire.
    const tests = readFileSync(RULE_TESTS, 'utf8');
    for (const r of rules) expect(tests).toMatch(new RegExp(`alertname: ${r.alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
  });
});
