import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse, parseAllDocuments } from 'yaml';

// Renders helm/timer with the real Helm (built from its Go module by deploy/local/helm.sh; npm test
// passes its path in TIMER_HELM_BIN) and checks the objects operators rely on.
jest.setTimeout(600_000);

const ROOT = join(__dirname, '..', '..');
const CHART = join(ROOT, 'helm', 'timer');
const PROD_VALUES = join(CHART, 'ci', 'production-values.yaml');
const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'];

// Rendered manifests are untyped YAML; the assertions below are the schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };

function helmBin(): string {
  return process.env.TIMER_HELM_BIN || execFileSync('bash', [join(ROOT, 'deploy/local/helm.sh')], { encoding: 'utf8' }).trim();
}

function helm(...args: string[]): string {
  return execFileSync(helmBin(), args, { encoding: 'utf8', cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

function render(...extra: string[]): Obj[] {
  // Rendered for an explicit cluster version: Helm built by `go install` carries no release
  // ldflags and would assume Kubernetes 1.20, below the chart's kubeVersion.
  return parseAllDocuments(helm('template', 'timer', CHART, '--namespace', 'timers', '--kube-version', '1.30.0', ...extra))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const byKind = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const named = (objs: Obj[], kind: string, name: string) => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in [${objs.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}]`);
  return found;
};

describe('Helm chart helm/timer', () => {
  it('lints with the default and the production-like values', () => {
    expect(helm('lint', CHART)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(helm('lint', CHART, '-f', PROD_VALUES)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  describe('default values', () => {
    let objs: Obj[];
    beforeAll(() => {
      objs = render();
    });

    it('renders a Deployment, Service, CPU HPA and PDB-capable labels per role', () => {
      expect(byKind(objs, 'Deployment').map((d) => d.metadata.name).sort()).toEqual(ROLES.map((r) => `timer-${r}`).sort());
      for (const role of ROLES) {
        const hpa = named(objs, 'HorizontalPodAutoscaler', `timer-${role}`);
        expect(hpa.apiVersion).toBe('autoscaling/v2');
        expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: `timer-${role}` });
        expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
        expect(named(objs, 'Service', `timer-${role}`).spec.ports[0].targetPort).toBe('http');
      }
    });

    it('runs each role non-root on a read-only root filesystem, with probes on /health', () => {
      for (const role of ROLES) {
        const pod = named(objs, 'Deployment', `timer-${role}`).spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        const [c] = pod.containers;
        expect(c.args).toEqual([role]);
        expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(c.readinessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
        expect(c.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
        expect(c.startupProbe.httpGet.path).toBe('/health/live');
        expect(c.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
        expect(c.envFrom).toEqual([{ configMapRef: { name: 'timer' } }, { secretRef: { name: 'timer' } }]);
        expect(c.resources.requests.cpu).toBeDefined();
        // Autoscaled: the Deployment must not fight the HPA over replicas.
        expect(named(objs, 'Deployment', `timer-${role}`).spec.replicas).toBeUndefined();
      }
    });

    it('keeps credentials in the Secret and settings in the ConfigMap', () => {
      const secret = named(objs, 'Secret', 'timer');
      expect(Object.keys(secret.stringData ?? {})).toEqual(expect.arrayContaining(['TIMER_MYSQL_URL', 'TIMER_REDIS_URL']));
      const config = named(objs, 'ConfigMap', 'timer');
      expect(config.data).toMatchObject({ TIMER_PULSAR_URL: 'http://pulsar-broker.pulsar:8080', TIMER_PULSAR_TENANT: 'timer', TIMER_LOG_FORMAT: 'json' });
      expect(JSON.stringify(config.data)).not.toMatch(/mysql:\/\//);
    });

    it('migrates the schema in a pre-install/pre-upgrade hook Job', () => {
      const [job] = byKind(objs, 'Job');
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      const c = job.spec.template.spec.containers[0];
      expect(c.args).toEqual(['migrate']);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
    });

    it('renders no ingress, KEDA, ServiceMonitor or PrometheusRule objects unless asked', () => {
      expect(byKind(objs, 'Ingress')).toHaveLength(0);
      expect(byKind(objs, 'ScaledObject')).toHaveLength(0);
      expect(byKind(objs, 'ServiceMonitor')).toHaveLength(0);
      expect(byKind(objs, 'PrometheusRule')).toHaveLength(0);
      expect(byKind(objs, 'PodDisruptionBudget').map((p) => p.metadata.name).sort()).toEqual(['timer-api', 'timer-executor', 'timer-scheduler', 'timer-trigger']);
    });
  });

  describe('production-like values', () => {
    let objs: Obj[];
    beforeAll(() => {
      objs = render('-f', PROD_VALUES);
    });

    it('exposes the api through the ingress with TLS and the class from values', () => {
      const ingress = named(objs, 'Ingress', 'timer');
      expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(ingress.spec.tls).toEqual([{ hosts: ['timer.acme.example'], secretName: 'timer-tls' }]);
      const rule = ingress.spec.rules[0];
      expect(rule.host).toBe('timer.acme.example');
      expect(rule.http.paths[0].backend.service).toEqual({ name: 'timer-api', port: { name: 'http' } });
    });

    it('scales trigger and executor on their Pulsar subscription backlog through KEDA instead of a plain HPA', () => {
      for (const [role, topic] of [['trigger', 'timer-slices'], ['executor', 'timer-tasks']]) {
        const so = named(objs, 'ScaledObject', `timer-${role}`);
        const pulsar = so.spec.triggers.find((t: { type: string }) => t.type === 'pulsar');
        expect(pulsar.metadata.topic).toBe(`persistent://acme-timer/prod/${topic}`);
        expect(pulsar.metadata.subscription).toBe(role);
        expect(objs.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === `timer-${role}`)).toBeUndefined();
      }
      expect(named(objs, 'HorizontalPodAutoscaler', 'timer-api').spec.minReplicas).toBe(3);
    });

    it('uses the existing Secret instead of rendering one, and the pinned image', () => {
      expect(byKind(objs, 'Secret')).toHaveLength(0);
      const c = named(objs, 'Deployment', 'timer-executor').spec.template.spec.containers[0];
      expect(c.envFrom[1]).toEqual({ secretRef: { name: 'timer-credentials' } });
      expect(c.image).toBe('registry.example.com/timer-service:0.1.0');
      expect(named(objs, 'ConfigMap', 'timer').data?.TIMER_PULSAR_PROVISION).toBe('false');
    });

    it('adds a ServiceMonitor scraping /metrics on every role service', () => {
      const sm = named(objs, 'ServiceMonitor', 'timer');
      expect(sm.metadata.labels?.release).toBe('prometheus');
      expect(sm.spec.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
    });

    it('adds a PrometheusRule with exactly the rules of deploy/prometheus/alerts.yml', () => {
      const rule = named(objs, 'PrometheusRule', 'timer');
      expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(rule.metadata.labels?.release).toBe('prometheus');
      const file = parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8'));
      expect(rule.spec).toEqual(file);
      expect(rule.spec.groups[0].rules.length).toBeGreaterThanOrEqual(7);
    });
  });
});
