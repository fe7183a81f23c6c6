import { execFile } from 'child_process';
import { readdirSync, readFileSync } from 'fs';
import { createServer, IncomingMessage, Server } from 'http';
import { AddressInfo } from 'net';
import { join } from 'path';
import { parse } from 'yaml';
import { byKind, CHART, CRD_APIS, lint, named, Obj, PROD_VALUES, render, renderError, schemaProblems } from './support/helm';
import { ROOT } from './support/registered-metrics';

// Renders helm/timer with the real Helm (built from its Go module by deploy/local/helm.sh; npm test
// passes its path in TIMER_HELM_BIN) and checks the objects operators rely on. Hook ordering:
// helm-hooks.spec.ts.
jest.setTimeout(600_000);

const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'];
const CI_VALUES = readdirSync(join(CHART, 'ci')).map((f) => join(CHART, 'ci', f));
const podOf = (objs: Obj[], role: string) => named(objs, 'Deployment', `timer-${role}`).spec.template.spec;

// Topic names as libs/contracts defines them (deploy tests may not import the libs): a rename there
// must reach the chart's KEDA defaults.
const TOPICS_SOURCE = readFileSync(join(ROOT, 'libs/contracts/src/lib/topics.ts'), 'utf8');
const topic = (key: string): string => {
  const m = new RegExp(`^  ${key}: '([^']+)',$`, 'm').exec(TOPICS_SOURCE);
  if (!m) throw new Error(`no topic ${key} in libs/contracts/src/lib/topics.ts`);
  return m[1];
};

describe('Helm chart helm/timer', () => {
  describe('values.schema.json', () => {
    it('lints strictly with the default values and every ci/ values file', () => {
      expect(CI_VALUES.length).toBeGreaterThan(0);
      for (const args of [[], ...CI_VALUES.map((f) => ['-f', f])]) {
        const { ok, output } = lint(...args);
        expect({ args, ok }).toEqual({ args, ok: true });
        expect(output).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      }
    });

    it.each([
      ['a typo in a role', 'roles.api.autoscalling.enabled=true', "at '/roles/api': additional properties 'autoscalling' not allowed"],
      ['a typo at the top', 'autoscalling=true', "additional properties 'autoscalling' not allowed"],
      ['a typo in networkPolicy', 'networkPolicy.enable=true', "at '/networkPolicy': additional properties 'enable' not allowed"],
      ['a string for a number', 'roles.api.replicas=two', "at '/roles/api/replicas': got string, want integer"],
      ['a string for a boolean', 'migration.enabled=yes', "at '/migration/enabled': got string, want boolean"],
      ['an unknown pull policy', 'image.pullPolicy=Sometimes', '/image/pullPolicy'],
    ])('fails lint and install on %s', (_what, set, message) => {
      const { ok, output } = lint('--set', set);
      expect(ok).toBe(false);
      expect(output).toContain(message);
      expect(renderError('--set', set)).toContain(message);
    });
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
        const pod = podOf(objs, role);
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        const [c] = pod.containers;
        expect(c.args).toEqual([role]);
        expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(c.readinessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
        expect(c.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
        expect(c.startupProbe.httpGet.path).toBe('/health/live');
        expect(c.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
        expect(c.envFrom).toEqual([{ configMapRef: { name: 'timer' } }, { secretRef: { name: 'timer' } }]);
        expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
        expect(c.resources.requests.cpu).toBeDefined();
        // Autoscaled: the Deployment must not fight the HPA over replicas.
        expect(named(objs, 'Deployment', `timer-${role}`).spec.replicas).toBeUndefined();
      }
    });

    it('bounds a minute\'s buckets by the triggers the release always runs, unless set', () => {
      const max = (...args: string[]) => named(args.length === 0 ? objs : render(...args), 'ConfigMap', 'timer').data?.TIMER_SLICE_BUCKETS_MAX;
      // 2 triggers at least (the HPA's minimum), 32 slots each: a third of one trigger's slots, the default.
      expect(max()).toBe('10');
      expect(max('--set', 'roles.trigger.autoscaling.minReplicas=4')).toBe('32');
      expect(max('--set', 'roles.trigger.autoscaling.enabled=false,roles.trigger.replicas=3,roles.trigger.env.TIMER_TRIGGER_CONCURRENCY=64')).toBe('42');
      expect(max('--set', 'config.TIMER_SLICE_BUCKETS_MAX=16')).toBe('16');
    });

    it('keeps credentials in the Secret and settings in the ConfigMap', () => {
      const secret = named(objs, 'Secret', 'timer');
      expect(Object.keys(secret.stringData ?? {})).toEqual(expect.arrayContaining(['TIMER_MYSQL_URL', 'TIMER_REDIS_URL']));
      const config = named(objs, 'ConfigMap', 'timer');
      expect(config.data).toMatchObject({ TIMER_PULSAR_URL: 'http://pulsar-broker.pulsar:8080', TIMER_PULSAR_TENANT: 'timer', TIMER_LOG_FORMAT: 'json' });
      expect(JSON.stringify(config.data)).not.toMatch(/mysql:\/\//);
    });

    it('migrates the schema in one hook Job per event, with its own hook copies of what it uses, cleaned up after', () => {
      const [job] = byKind(objs, 'Job');
      expect(job.metadata.name).toBe('timer-migrate');
      expect(job.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-install,pre-upgrade',
        'helm.sh/hook-weight': '0',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
        'helm.sh/hook-output-log-policy': 'hook-failed',
      });
      expect(job.spec.ttlSecondsAfterFinished).toBe(3600);
      const pod = job.spec.template.spec;
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.serviceAccountName).toBe('timer-migrate');
      const c = pod.containers[0];
      expect(c.args).toEqual(['migrate']);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } });
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'timer-migrate' } }, { secretRef: { name: 'timer-migrate' } }]);
      for (const kind of ['ConfigMap', 'Secret', 'ServiceAccount']) {
        expect(named(objs, kind, 'timer-migrate').metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-weight': '-10' });
      }
      // The copies carry the same settings and credentials as the roles' objects.
      expect(named(objs, 'ConfigMap', 'timer-migrate').data).toEqual(named(objs, 'ConfigMap', 'timer').data);
      expect(named(objs, 'Secret', 'timer-migrate').stringData).toEqual(named(objs, 'Secret', 'timer').stringData);
    });

    it('drains api pods behind a preStop sleep, inside a grace period longer than sleep plus drain', () => {
      for (const role of ROLES) {
        const pod = podOf(objs, role);
        expect(pod.terminationGracePeriodSeconds).toBe(45);
        const preStop = pod.containers[0].lifecycle?.preStop;
        if (role === 'api') expect(preStop).toEqual({ exec: { command: ['sleep', '10'] } });
        else expect(preStop).toBeUndefined();
      }
      // Readiness tolerates ~30 s of failing dependency pings before a pod leaves the Service.
      const r = podOf(objs, 'api').containers[0].readinessProbe;
      expect(r.periodSeconds * r.failureThreshold).toBeGreaterThanOrEqual(30);
      expect(renderError('--set', 'terminationGracePeriodSeconds=30')).toContain(
        'terminationGracePeriodSeconds (30) must exceed roles.api.preStopSleepSeconds (10) plus its drain (TIMER_SHUTDOWN_TIMEOUT_MS, 25 s)',
      );
      expect(renderError('--set', 'roles.executor.env.TIMER_SHUTDOWN_TIMEOUT_MS=60000')).toContain('roles.executor.preStopSleepSeconds (0) plus its drain (TIMER_SHUTDOWN_TIMEOUT_MS, 60 s)');
    });

    it('rolls the pods when the Secret or the ConfigMap changes', () => {
      const annotations = (o: Obj[]) => named(o, 'Deployment', 'timer-executor').spec.template.metadata.annotations;
      const before = annotations(objs);
      const rotated = annotations(render('--set', 'adminToken=rotated'));
      expect(rotated['checksum/secret']).not.toBe(before['checksum/secret']);
      expect(rotated['checksum/config']).toBe(before['checksum/config']);
      expect(annotations(render('--set', 'config.TIMER_LOG_LEVEL=debug'))['checksum/config']).not.toBe(before['checksum/config']);
    });

    it("spreads each role's pods over zones and nodes", () => {
      for (const role of ROLES) {
        const constraints = podOf(objs, role).topologySpreadConstraints;
        expect(constraints.map((t: { topologyKey: string }) => t.topologyKey)).toEqual(['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
        for (const t of constraints) {
          expect(t).toMatchObject({ maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { 'app.kubernetes.io/component': role, 'app.kubernetes.io/instance': 'timer' } } });
        }
      }
    });

    it('adds a helm test pod that checks /health and a create/delete round trip through the api Service', () => {
      const pod = named(objs, 'Pod', 'timer-test');
      expect(pod.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
      const c = pod.spec.containers[0];
      expect(c.command.slice(0, 2)).toEqual(['node', '-e']);
      expect(c.command[2]).toBe(readFileSync(join(CHART, 'files', 'helm-test.js'), 'utf8'));
      expect(c.env).toEqual([
        { name: 'TIMER_TEST_URL', value: 'http://timer-api:80' },
        { name: 'TIMER_TEST_APP', value: 'helm-test' },
        { name: 'TIMER_ADMIN_TOKEN', valueFrom: { secretKeyRef: { name: 'timer', key: 'TIMER_ADMIN_TOKEN', optional: true } } },
      ]);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    });

    it('renders no ingress, KEDA, NetworkPolicy, ServiceMonitor or PrometheusRule objects unless asked', () => {
      expect(byKind(objs, 'Ingress')).toHaveLength(0);
      expect(byKind(objs, 'TriggerAuthentication')).toHaveLength(0);
      expect(byKind(objs, 'NetworkPolicy')).toHaveLength(0);
      expect(byKind(objs, 'ScaledObject')).toHaveLength(0);
      expect(byKind(objs, 'ServiceMonitor')).toHaveLength(0);
      expect(byKind(objs, 'PrometheusRule')).toHaveLength(0);
      expect(byKind(objs, 'PodDisruptionBudget').map((p) => p.metadata.name).sort()).toEqual(['timer-api', 'timer-executor', 'timer-scheduler', 'timer-trigger']);
    });
  });

  describe('production-like values', () => {
    let objs: Obj[];
    beforeAll(() => {
      objs = render('-f', PROD_VALUES, ...CRD_APIS);
    });

    it('exposes the api through the ingress with TLS and the class from values', () => {
      const ingress = named(objs, 'Ingress', 'timer');
      expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(ingress.spec.tls).toEqual([{ hosts: ['timer.acme.example'], secretName: 'timer-tls' }]);
      const rule = ingress.spec.rules[0];
      expect(rule.host).toBe('timer.acme.example');
      expect(rule.http.paths[0].backend.service).toEqual({ name: 'timer-api', port: { name: 'http' } });
    });

    it('scales trigger and executor on the backlog of every topic they consume through KEDA instead of a plain HPA', () => {
      const consumed = { trigger: [topic('slices')], executor: [topic('tasks'), topic('catchUp'), topic('retries')] };
      for (const [role, topics] of Object.entries(consumed)) {
        const so = named(objs, 'ScaledObject', `timer-${role}`);
        const pulsar = so.spec.triggers.filter((t: { type: string }) => t.type === 'pulsar');
        expect(pulsar.map((t: { metadata: { topic: string } }) => t.metadata.topic)).toEqual(topics.map((t) => `persistent://acme-timer/prod/${t}`));
        for (const t of pulsar) {
          expect(t.metadata).toMatchObject({ subscription: role, adminURL: 'https://pulsar-broker.pulsar.svc:8443', authModes: 'bearer' });
          expect(t.authenticationRef).toEqual({ name: 'timer-pulsar' });
        }
        expect(objs.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === `timer-${role}`)).toBeUndefined();
      }
      expect(named(objs, 'HorizontalPodAutoscaler', 'timer-api').spec.minReplicas).toBe(3);
    });

    it("gives KEDA the broker's token and CA through a TriggerAuthentication", () => {
      const auth = named(objs, 'TriggerAuthentication', 'timer-pulsar');
      expect(auth.apiVersion).toBe('keda.sh/v1alpha1');
      expect(auth.spec.secretTargetRef).toEqual([
        { parameter: 'bearerToken', name: 'pulsar-token', key: 'token' },
        { parameter: 'ca', name: 'pulsar-ca', key: 'ca.crt' },
      ]);
      // By default the token is TIMER_PULSAR_TOKEN of the chart's own Secret.
      const own = render('--set', 'roles.executor.keda.enabled=true,keda.authentication.enabled=true,pulsar.token=t0ken', ...CRD_APIS);
      expect(named(own, 'TriggerAuthentication', 'timer-pulsar').spec.secretTargetRef).toEqual([{ parameter: 'bearerToken', name: 'timer', key: 'TIMER_PULSAR_TOKEN' }]);
      expect(renderError('--set', 'roles.executor.keda.enabled=true,keda.authentication.enabled=true', ...CRD_APIS)).toContain('set pulsar.token, existingSecret or keda.authentication.token.secretName');
    });

    it('adds extraEnv (from Secrets), extraEnvFrom, extraVolumes and pod metadata to every role and the migration Job', () => {
      const job = byKind(objs, 'Job')[0];
      for (const [what, pod, meta] of [
        ...ROLES.map((r) => [r, podOf(objs, r), named(objs, 'Deployment', `timer-${r}`).spec.template.metadata]),
        ['migrate', job.spec.template.spec, job.spec.template.metadata],
      ]) {
        const c = pod.containers[0];
        expect({ what, env: c.env }).toEqual({ what, env: expect.arrayContaining([{ name: 'TIMER_PULSAR_TOKEN', valueFrom: { secretKeyRef: { name: 'pulsar-token', key: 'token' } } }]) });
        expect(c.envFrom).toEqual([
          { configMapRef: { name: what === 'migrate' ? 'timer-migrate' : 'timer' } },
          { secretRef: { name: 'timer-credentials' } },
          { secretRef: { name: 'timer-extra-env', optional: true } },
        ]);
        expect(c.volumeMounts).toContainEqual({ name: 'pulsar-ca', mountPath: '/etc/timer/ca', readOnly: true });
        expect(pod.volumes).toContainEqual({ name: 'pulsar-ca', secret: { secretName: 'pulsar-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
        expect(pod.imagePullSecrets).toEqual([{ name: 'registry-credentials' }]);
        expect(meta.annotations['example.com/team']).toBe('timers');
        expect(meta.labels['cost-center']).toBe('platform');
      }
    });

    it('schedules the migration Job with its own nodeSelector and tolerations, and no ServiceAccount copy is needed for an existing Secret', () => {
      const pod = byKind(objs, 'Job')[0].spec.template.spec;
      expect(pod.nodeSelector).toEqual({ 'node-role.example.com/batch': 'true' });
      expect(pod.tolerations).toEqual([{ key: 'batch', operator: 'Exists', effect: 'NoSchedule' }]);
      expect(byKind(objs, 'Secret')).toHaveLength(0);
      expect(named(objs, 'ConfigMap', 'timer-migrate').metadata.annotations?.['helm.sh/hook-weight']).toBe('-10');
    });

    it('restricts every role with a NetworkPolicy: dependencies by the selectors given, callbacks to public addresses', () => {
      expect(byKind(objs, 'NetworkPolicy').map((n) => n.metadata.name).sort()).toEqual(['timer-migrate', 'timer-test', ...ROLES.map((r) => `timer-${r}`)].sort());
      for (const role of ROLES) {
        const np = named(objs, 'NetworkPolicy', `timer-${role}`);
        expect(np.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe(role);
        expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
        expect(np.spec.egress.slice(0, 4)).toEqual([
          { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
          { ports: [{ port: 3306, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '10.20.0.0/24' } }] },
          { ports: [{ port: 6379, protocol: 'TCP' }], to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'redis' } } }] },
          { ports: [{ port: 8443, protocol: 'TCP' }], to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'pulsar' } } }] },
        ]);
        expect(np.spec.egress).toHaveLength(role === 'executor' ? 5 : 4);
      }
      // The migration Job's policy is a hook created before it, to MySQL only.
      const migrate = named(objs, 'NetworkPolicy', 'timer-migrate');
      expect(migrate.metadata.annotations?.['helm.sh/hook-weight']).toBe('-10');
      expect(migrate.spec.egress.map((e: { ports: { port: number }[] }) => e.ports[0].port)).toEqual([53, 3306]);
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
  describe('optional objects on the default values', () => {
    let objs: Obj[];
    beforeAll(() => {
      objs = render('--set', 'networkPolicy.enabled=true,alerts.enabled=true,roles.trigger.keda.enabled=true,roles.executor.keda.enabled=true,keda.authentication.enabled=true,pulsar.token=t0ken', ...CRD_APIS);
    });

    it('renders NetworkPolicy, PrometheusRule and TriggerAuthentication when enabled', () => {
      expect(byKind(objs, 'NetworkPolicy')).toHaveLength(ROLES.length + 2);
      expect(byKind(objs, 'PrometheusRule')).toHaveLength(1);
      expect(byKind(objs, 'TriggerAuthentication')).toHaveLength(1);
      expect(byKind(objs, 'ScaledObject')).toHaveLength(2);
    });

    it('lets the executor call public addresses only, besides DNS and its dependencies', () => {
      const egress = named(objs, 'NetworkPolicy', 'timer-executor').spec.egress;
      // With no `to` given, the dependencies are allowed by port alone.
      expect(egress.slice(0, 4).map((e: { ports: { port: number }[]; to?: unknown }) => [e.ports.map((p) => p.port), e.to])).toEqual([
        [[53, 53], undefined],
        [[3306], undefined],
        [[6379], undefined],
        [[8080, 8443], undefined],
      ]);
      const [v4, v6] = egress[4].to.map((t: { ipBlock: unknown }) => t.ipBlock);
      expect(egress[4].ports).toBeUndefined();
      expect(v4.cidr).toBe('0.0.0.0/0');
      expect(v4.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8']));
      expect(v6).toEqual({ cidr: '::/0', except: expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']) });
      for (const role of ROLES.filter((r) => r !== 'executor')) {
        expect(JSON.stringify(named(objs, 'NetworkPolicy', `timer-${role}`).spec.egress)).not.toContain('ipBlock');
      }
    });

    it('admits the ingress controller and the test pod to the api, and only the scrapers to the other roles', () => {
      const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
      expect(named(objs, 'NetworkPolicy', 'timer-api').spec.ingress).toEqual([
        {
          ports: [{ port: 'http', protocol: 'TCP' }],
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
            monitoring,
            { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'timer', 'app.kubernetes.io/instance': 'timer', 'app.kubernetes.io/component': 'test' } } },
          ],
        },
      ]);
      expect(named(objs, 'NetworkPolicy', 'timer-scheduler').spec.ingress).toEqual([{ ports: [{ port: 'http', protocol: 'TCP' }], from: [monitoring] }]);
      // The test pod's own egress policy is a test hook created before it.
      const test = named(objs, 'NetworkPolicy', 'timer-test');
      expect(test.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'test', 'helm.sh/hook-weight': '-10' });
      expect(test.spec.egress[1]).toEqual({ to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'timer', 'app.kubernetes.io/instance': 'timer', 'app.kubernetes.io/component': 'api' } } }], ports: [{ port: 8080, protocol: 'TCP' }] });
    });

    it('scales the executor on the topics of libs/contracts by default, with the token of the chart Secret', () => {
      const topics = named(objs, 'ScaledObject', 'timer-executor')
        .spec.triggers.filter((t: { type: string }) => t.type === 'pulsar')
        .map((t: { metadata: { topic: string } }) => t.metadata.topic);
      expect(topics).toEqual(['tasks', 'catchUp', 'retries'].map((k) => `persistent://timer/timer/${topic(k)}`));
      expect(named(objs, 'ScaledObject', 'timer-trigger').spec.triggers[0].metadata.topic).toBe(`persistent://timer/timer/${topic('slices')}`);
    });
  });

  describe('operators\' first day', () => {
    const POD_SPECS = (objs: Obj[]) => [
      ...objs.filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind)).map((o) => [`${o.kind}/${o.metadata.name}`, o.spec.template.spec]),
      ...byKind(objs, 'Pod').map((o) => [`Pod/${o.metadata.name}`, o.spec]),
    ];

    it('turns off service links on every pod, so Kubernetes injects no TIMER_*_SERVICE_* variables', () => {
      const objs = render('--set', 'quickstart.enabled=true');
      const pods = POD_SPECS(objs);
      expect(pods.length).toBe(ROLES.length + 3 + 2); // roles, quickstart servers, migration Job, test pod
      for (const [what, pod] of pods) expect({ what, enableServiceLinks: pod.enableServiceLinks }).toEqual({ what, enableServiceLinks: false });
    });

    it('runs MariaDB, Redis and a Pulsar standalone with the broker settings the service needs, and points the roles at them', () => {
      const objs = render('--set', 'quickstart.enabled=true,adminToken=t0ken');
      const servers = { mariadb: 3306, redis: 6379, pulsar: 8080 };
      for (const [server, port] of Object.entries(servers)) {
        const sts = named(objs, 'StatefulSet', `timer-${server}`);
        expect(sts.spec).toMatchObject({ serviceName: `timer-${server}`, replicas: 1 });
        expect(sts.spec.volumeClaimTemplates[0].spec.accessModes).toEqual(['ReadWriteOnce']);
        const svc = named(objs, 'Service', `timer-${server}`);
        expect(svc.spec.ports[0].port).toBe(port);
        expect(svc.spec.selector).toEqual(sts.spec.selector.matchLabels);
        expect(sts.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
      }
      const pulsar = named(objs, 'StatefulSet', 'timer-pulsar').spec.template.spec.containers[0];
      expect(pulsar.env).toEqual(
        expect.arrayContaining([
          { name: 'PULSAR_PREFIX_webSocketServiceEnabled', value: 'true' },
          { name: 'PULSAR_PREFIX_isDelayedDeliveryDeliverAtTimeStrict', value: 'true' },
          { name: 'PULSAR_PREFIX_delayedDeliveryTickTimeMillis', value: '100' },
          { name: 'PULSAR_PREFIX_brokerDeleteInactiveTopicsEnabled', value: 'false' },
        ]),
      );
      expect(named(objs, 'Secret', 'timer').stringData).toMatchObject({
        TIMER_MYSQL_URL: 'mysql://timer:timer-quickstart@timer-mariadb:3306/timer',
        TIMER_REDIS_URL: 'redis://timer-redis:6379/0',
      });
      expect(named(objs, 'ConfigMap', 'timer').data?.TIMER_PULSAR_URL).toBe('http://timer-pulsar:8080');
      // The first migration runs once the release's MariaDB exists: post-install, not pre-install.
      expect(named(objs, 'Job', 'timer-migrate').metadata.annotations?.['helm.sh/hook']).toBe('post-install,pre-upgrade');
      expect(named(objs, 'Secret', 'timer-migrate').metadata.annotations?.['helm.sh/hook']).toBe('post-install,pre-upgrade');
      // Off by default: none of it.
      expect(byKind(render(), 'StatefulSet')).toHaveLength(0);
    });

    it('routes the REST API, its OpenAPI document and the console through the Ingress and the HTTPRoute', () => {
      const objs = render('-f', PROD_VALUES, '--set', 'httpRoute.enabled=true,httpRoute.parentRefs[0].name=public,httpRoute.parentRefs[0].namespace=gateways,httpRoute.hostnames[0]=timer.acme.example', ...CRD_APIS);
      const ingressPaths = named(objs, 'Ingress', 'timer').spec.rules[0].http.paths;
      const route = named(objs, 'HTTPRoute', 'timer');
      expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
      expect(route.spec.parentRefs).toEqual([{ name: 'public', namespace: 'gateways' }]);
      expect(route.spec.hostnames).toEqual(['timer.acme.example']);
      expect(route.spec.rules[0].backendRefs).toEqual([{ name: 'timer-api', port: 80 }]);
      const routePrefixes = route.spec.rules[0].matches.map((m: { path: { type: string; value: string } }) => (expect(m.path.type).toBe('PathPrefix'), m.path.value));
      const ingressPrefixes = ingressPaths.map((p: { path: string; pathType: string }) => (expect(p.pathType).toBe('Prefix'), p.path));
      for (const prefixes of [ingressPrefixes, routePrefixes]) {
        for (const path of ['/api/timer/v1/def', '/api/docs', '/api/docs-json', '/console', '/console/assets/index.js']) {
          // A Prefix match is element-wise: /api matches /api/docs, not /apidocs.
          expect({ path, routed: prefixes.some((p: string) => path === p || path.startsWith(`${p}/`)) }).toEqual({ path, routed: true });
        }
      }
      expect(ingressPaths.every((p: { backend: { service: { name: string } } }) => p.backend.service.name === 'timer-api')).toBe(true);
      expect(renderError('--set', 'httpRoute.enabled=true', ...CRD_APIS)).toContain('httpRoute.parentRefs: name the Gateway(s) to attach to');
    });

    it('renders KEDA, ServiceMonitor, PrometheusRule and HTTPRoute objects only on a cluster that serves their CRDs', () => {
      const bare = render('-f', PROD_VALUES, '--set', 'httpRoute.enabled=true,httpRoute.parentRefs[0].name=public');
      for (const kind of ['ScaledObject', 'TriggerAuthentication', 'ServiceMonitor', 'PrometheusRule', 'HTTPRoute']) expect({ kind, n: byKind(bare, kind).length }).toEqual({ kind, n: 0 });
      // Without KEDA the roles it would scale keep their CPU HPA.
      expect(byKind(bare, 'HorizontalPodAutoscaler').map((h) => h.metadata.name).sort()).toEqual(ROLES.map((r) => `timer-${r}`).sort());
      const full = render('-f', PROD_VALUES, '--set', 'httpRoute.enabled=true,httpRoute.parentRefs[0].name=public', ...CRD_APIS);
      for (const kind of ['ScaledObject', 'TriggerAuthentication', 'ServiceMonitor', 'PrometheusRule', 'HTTPRoute']) expect({ kind, n: byKind(full, kind).length > 0 }).toEqual({ kind, n: true });
    });

    it('gives every alert a runbook_url, a full URL under alerts.runbookBaseUrl', () => {
      const base = 'https://git.acme.example/timer/blob/v0.1.0/docs/operations.md';
      const rules = named(render('--set', `alerts.enabled=true,alerts.runbookBaseUrl=${base}`, ...CRD_APIS), 'PrometheusRule', 'timer').spec.groups[0].rules;
      for (const r of rules) {
        expect(r.annotations.runbook_url).toBe(`${base}#${r.alert.toLowerCase()}`);
        expect(r.annotations.runbook).toBeUndefined();
      }
    });

    it('ships the Grafana dashboard in a ConfigMap with the sidecar label', () => {
      const dashboard = readFileSync(join(ROOT, 'deploy/grafana/timer-dashboard.json'), 'utf8');
      // Fix: cp deploy/grafana/timer-dashboard.json helm/timer/files/timer-dashboard.json
      expect(readFileSync(join(CHART, 'files', 'timer-dashboard.json'), 'utf8')).toBe(dashboard);
      const cm = named(render('--set', 'grafanaDashboard.enabled=true'), 'ConfigMap', 'timer-dashboard');
      expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
      expect(JSON.parse(cm.data!['timer-dashboard.json'])).toEqual(JSON.parse(dashboard));
    });

    it.each([
      ['the default values', []],
      ['the production-like values with every CRD', ['-f', PROD_VALUES, '--set', 'httpRoute.enabled=true,httpRoute.parentRefs[0].name=public,grafanaDashboard.enabled=true', ...CRD_APIS]],
      ['the quickstart', ['--set', 'quickstart.enabled=true,ingress.enabled=true,networkPolicy.enabled=true,secretsKey=' + Buffer.alloc(32, 1).toString('base64')]],
    ])('renders objects that validate against the Kubernetes API schemas: %s', (_what, args) => {
      const objs = render(...args);
      expect(objs.length).toBeGreaterThan(10);
      expect(schemaProblems(objs)).toEqual([]);
    });

    it('finds the schema problems it is meant to find', () => {
      const [deployment] = byKind(render(), 'Deployment');
      const broken = { ...deployment, spec: { ...deployment.spec, template: { ...deployment.spec.template, spec: { ...deployment.spec.template.spec, enableServiceLinks: 'no' } } } };
      expect(schemaProblems([broken])).toEqual([expect.stringContaining('enableServiceLinks must be boolean')]);
    });
  });

  describe('chart README', () => {
    it('documents every parameter of values.yaml', () => {
      const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
      const missing = parameterPaths(parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'))).filter((p) => !readme.includes(`| \`${p}\``));
      expect(missing).toEqual([]);
    });
  });
});

// Free-form maps and Kubernetes objects are one parameter; a role's keys are documented once as `roles.<role>.*`.
const WHOLE = new Set(['config', 'podAnnotations', 'podLabels', 'serviceAccount.annotations', 'ingress.annotations', 'httpRoute.annotations', 'grafanaDashboard.labels', 'grafanaDashboard.annotations', 'quickstart.mariadb.resources', 'quickstart.redis.resources', 'quickstart.pulsar.resources', 'serviceMonitor.labels', 'alerts.labels', 'podSecurityContext', 'securityContext', 'nodeSelector', 'affinity', 'migration.nodeSelector', 'migration.affinity', 'roles.<role>.env', 'roles.<role>.resources', 'migration.resources', 'tests.resources']);

function parameterPaths(values: Record<string, unknown>, prefix = ''): string[] {
  return [
    ...new Set(
      Object.entries(values).flatMap(([k, v]) => {
        const path = prefix === 'roles.' ? 'roles.<role>' : `${prefix}${k}`;
        if (WHOLE.has(path) || typeof v !== 'object' || v === null || Array.isArray(v)) return [path];
        return parameterPaths(v as Record<string, unknown>, `${path}.`);
      }),
    ),
  ];
}

describe('helm test script (files/helm-test.js)', () => {
  interface Seen {
    method: string;
    url: string;
    auth: string;
    body: Record<string, unknown> | undefined;
  }
  let server: Server;
  let url: string;
  let seen: Seen[];
  let answer: (req: Seen) => [number, unknown];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const r: Seen = { method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization ?? '-', body: body ? JSON.parse(body) : undefined };
        seen.push(r);
        const [status, json] = answer(r);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen = [];
  });

  const run = (env: Record<string, string>) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const options = { env: { PATH: process.env.PATH, TIMER_TEST_URL: url, TIMER_TEST_APP: 'helm-test', ...env } };
      execFile(process.execPath, [join(CHART, 'files', 'helm-test.js')], options, (e, stdout, stderr) => resolve({ code: e ? Number(e.code ?? 1) : 0, out: stdout + stderr }));
    });

  // Answers shaped as the api's contract gives them (docs/design.md): `code` 0 on success.
  const api = (r: Seen): [number, unknown] => {
    if (r.url === '/health') return [200, { status: 'ok' }];
    if (r.method === 'POST') return [200, { code: 0, msg: 'ok', id: '42', version: 1 }];
    if (r.method === 'GET') return [200, { code: 0, msg: 'ok', data: { id: '42', name: seen[1]?.body?.name } }];
    return [200, { code: 0, msg: 'ok' }];
  };

  it('checks /health, then creates, reads and deletes a timer with the admin token', async () => {
    answer = api;
    const { code, out } = await run({ TIMER_ADMIN_TOKEN: 's3cret' });
    expect(out).toContain('ok: /health answered; timer 42 of app helm-test created, read and deleted');
    expect(code).toBe(0);
    expect(seen.map((r) => `${r.method} ${r.url} ${r.auth}`)).toEqual([
      'GET /health Bearer s3cret',
      'POST /api/timer/v1/def Bearer s3cret',
      'GET /api/timer/v1/def?id=42&app=helm-test Bearer s3cret',
      'DELETE /api/timer/v1/def Bearer s3cret',
    ]);
    expect(seen[1].body).toMatchObject({ app: 'helm-test', cron: '0 0 1 1 *', notifyHTTPParam: { url: 'https://example.com/timer-helm-test', method: 'POST' } });
    expect(seen[3].body).toEqual({ id: '42', app: 'helm-test' });
  });

  it('fails, naming the answer, when the api refuses the create (no admin token)', async () => {
    answer = (r) => (r.method === 'POST' ? [401, { code: 40100, msg: 'missing bearer token' }] : api(r));
    const { code, out } = await run({});
    expect(code).toBe(1);
    expect(out).toContain('helm test failed: POST /api/timer/v1/def: HTTP 401 {"code":40100,"msg":"missing bearer token"}');
    expect(seen[1].auth).toBe('-');
  });

  it('fails when /health is not ready, and deletes the timer when the read fails', async () => {
    answer = (r) => (r.url === '/health' ? [503, { status: 'error' }] : api(r));
    expect((await run({})).code).toBe(1);
    expect(seen).toHaveLength(1);
    seen = [];
    answer = (r) => (r.method === 'GET' && r.url !== '/health' ? [404, { code: 40400, msg: 'no timer 42' }] : api(r));
    expect((await run({})).code).toBe(1);
    expect(seen.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'DELETE']);
  });
});
