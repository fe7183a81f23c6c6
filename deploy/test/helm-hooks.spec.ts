import { byKind, PROD_VALUES, render } from './support/helm';
import { hookOrderViolations, Manifest } from './support/hook-order';

// The first `helm install` must work: every hook finds the objects it uses. The check itself is
// tested on crafted manifests first (the chart's old layout must fail it), then run on the chart.
jest.setTimeout(600_000);

const hook = (events: string, weight: number) => ({ 'helm.sh/hook': events, 'helm.sh/hook-weight': String(weight) });
const obj = (kind: string, name: string, annotations?: Record<string, string>, spec?: unknown): Manifest => ({ kind, metadata: { name, annotations }, spec });
const migrateJob = (weight: number, pod: Record<string, unknown>) => obj('Job', 'timer-migrate', hook('pre-install,pre-upgrade', weight), { template: { spec: pod } });
const podUsing = (config: string, secret: string, sa: string) => ({
  serviceAccountName: sa,
  imagePullSecrets: [{ name: 'registry' }],
  containers: [{ name: 'migrate', envFrom: [{ configMapRef: { name: config } }, { secretRef: { name: secret } }] }],
});

describe('hook ordering check', () => {
  it("fails the chart's old layout: a pre-install Job on the release's own ConfigMap, Secret and ServiceAccount", () => {
    const old = [obj('ConfigMap', 'timer'), obj('Secret', 'timer'), obj('ServiceAccount', 'timer'), migrateJob(0, podUsing('timer', 'timer', 'timer'))];
    const problems = hookOrderViolations(old);
    // Each of the three objects, at install and at upgrade.
    expect(problems).toHaveLength(6);
    for (const ref of ['ConfigMap/timer', 'Secret/timer', 'ServiceAccount/timer']) {
      expect(problems).toContainEqual(expect.stringMatching(new RegExp(`\\(pre-install, weight 0\\) uses ${ref} .*not a hook`)));
    }
  });

  it('passes hook copies of a lower weight in the same events, and skips objects the chart does not render', () => {
    const copies = ['ConfigMap', 'Secret', 'ServiceAccount'].map((k) => obj(k, 'timer-migrate', hook('pre-install,pre-upgrade', -10)));
    expect(hookOrderViolations([...copies, migrateJob(0, podUsing('timer-migrate', 'timer-migrate', 'timer-migrate'))])).toEqual([]);
    expect(hookOrderViolations([migrateJob(0, podUsing('theirs', 'existing-secret', 'default'))])).toEqual([]);
  });

  it('fails a hook copy of the same or a higher weight, or of other events only', () => {
    const sameWeight = [obj('Secret', 'timer-migrate', hook('pre-install,pre-upgrade', 0)), migrateJob(0, podUsing('x', 'timer-migrate', 'y'))];
    expect(hookOrderViolations(sameWeight)).toEqual([expect.stringContaining('a hook of weight 0: not created before it'), expect.stringContaining('a hook of weight 0')]);
    const installOnly = [obj('Secret', 's', hook('pre-install', -5)), migrateJob(0, podUsing('x', 's', 'y'))];
    expect(hookOrderViolations(installOnly)).toEqual([expect.stringMatching(/\(pre-upgrade, weight 0\) uses Secret\/s .*a hook of pre-install only/)]);
  });

  it('reads env valueFrom, volumes (configMap, secret, projected, PVC) and init containers', () => {
    const pod = {
      initContainers: [{ name: 'wait', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'a' } } }] }],
      containers: [{ name: 'main', env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'env-config', key: 'b' } } }] }],
      volumes: [
        { name: 'c', configMap: { name: 'vol-config' } },
        { name: 's', secret: { secretName: 'vol-secret' } },
        { name: 'p', projected: { sources: [{ secret: { name: 'proj-secret' } }] } },
        { name: 'd', persistentVolumeClaim: { claimName: 'data' } },
      ],
    };
    const objs = [
      ...['env-secret', 'vol-secret', 'proj-secret'].map((n) => obj('Secret', n)),
      ...['env-config', 'vol-config'].map((n) => obj('ConfigMap', n)),
      obj('PersistentVolumeClaim', 'data'),
      obj('Pod', 'p', hook('pre-install', 0), pod),
    ];
    expect(hookOrderViolations(objs).map((p) => p.replace(/ uses (\S+) in (\S+),.*/, ' $1 $2'))).toEqual([
      'Pod/p (pre-install, weight 0) Secret/env-secret containers[wait].env[A]',
      'Pod/p (pre-install, weight 0) ConfigMap/env-config containers[main].env[B]',
      'Pod/p (pre-install, weight 0) ConfigMap/vol-config volumes[c]',
      'Pod/p (pre-install, weight 0) Secret/vol-secret volumes[s]',
      'Pod/p (pre-install, weight 0) Secret/proj-secret volumes[p]',
      'Pod/p (pre-install, weight 0) PersistentVolumeClaim/data volumes[d]',
    ]);
  });

  it('lets test and post-install hooks use the release objects, which exist by then', () => {
    const objs = [obj('Secret', 'timer'), obj('Pod', 'timer-test', hook('test', 0), { containers: [{ name: 't', envFrom: [{ secretRef: { name: 'timer' } }] }] })];
    expect(hookOrderViolations(objs)).toEqual([]);
  });
});

describe('helm/timer hooks', () => {
  const cases: [string, string[]][] = [
    ['default values', []],
    ['production-like values', ['-f', PROD_VALUES]],
    ['every optional object enabled', ['--set', 'networkPolicy.enabled=true,serviceMonitor.enabled=true,alerts.enabled=true,roles.executor.keda.enabled=true,extraVolumes[0].name=ca,extraVolumes[0].secret.secretName=pulsar-ca']],
    ['no ServiceAccount created', ['--set', 'serviceAccount.create=false,serviceAccount.name=timer-runner']],
  ];

  it.each(cases)('every hook finds what it uses before it runs (%s)', (_name, args) => {
    const objs = render(...args);
    expect(byKind(objs, 'Job')).toHaveLength(1);
    expect(hookOrderViolations(objs)).toEqual([]);
  });

  it('catches a role Secret mounted into the migration Job through extraVolumes', () => {
    // extraVolumes naming the chart's own Secret (not its hook copy): the Job would wait for it.
    const objs = render('--set', 'extraVolumes[0].name=creds,extraVolumes[0].secret.secretName=timer');
    expect(hookOrderViolations(objs)).toEqual([
      expect.stringContaining('Job/timer-migrate (pre-install, weight 0) uses Secret/timer in volumes[creds]'),
      expect.stringContaining('Job/timer-migrate (pre-upgrade, weight 0) uses Secret/timer in volumes[creds]'),
    ]);
  });
});
