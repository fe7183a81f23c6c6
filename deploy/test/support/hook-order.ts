/**
 * Hook ordering of a rendered chart. Helm creates a release's ordinary objects only after its
 * pre-install hooks succeeded (and updates them only after the pre-upgrade hooks), and runs the hooks
 * of one event one after the other in ascending `helm.sh/hook-weight` (ties by name). A hook pod that
 * mounts, reads env from or runs as a ConfigMap, Secret, ServiceAccount or PVC of the same chart
 * therefore only starts when that object is itself a hook of the same event with a lower weight;
 * otherwise it waits for an object that does not exist yet and `helm install` times out.
 */

/** A rendered object, as far as this check reads it. */
export interface Manifest {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: unknown;
}

export interface HookInfo {
  events: string[];
  weight: number;
}

export interface Reference {
  kind: 'ConfigMap' | 'Secret' | 'ServiceAccount' | 'PersistentVolumeClaim';
  name: string;
  /** Where the pod spec names it, e.g. `containers[migrate].envFrom`. */
  via: string;
}

/** Events at which the release's ordinary objects do not exist yet (install) or are not updated yet (upgrade). */
const BEFORE_RELEASE_OBJECTS = ['pre-install', 'pre-upgrade'];

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const at = (v: unknown, ...path: string[]): unknown => path.reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), v);

export function hookOf(o: Manifest): HookInfo | undefined {
  const a = o.metadata.annotations ?? {};
  if (!a['helm.sh/hook']) return undefined;
  return { events: a['helm.sh/hook'].split(',').map((e) => e.trim()), weight: Number(a['helm.sh/hook-weight'] ?? '0') };
}

/** The pod spec of a workload object (Pod, Job, CronJob, Deployment, StatefulSet, DaemonSet, ReplicaSet). */
export function podSpecOf(o: Manifest): Json | undefined {
  const spec =
    o.kind === 'Pod' ? o.spec : o.kind === 'CronJob' ? at(o.spec, 'jobTemplate', 'spec', 'template', 'spec') : at(o.spec, 'template', 'spec');
  return isObj(spec) ? spec : undefined;
}

/** Every object of the kinds above a pod spec uses (imagePullSecrets are left out: always external here). */
export function referencesOf(pod: Json): Reference[] {
  const refs: Reference[] = [];
  const add = (kind: Reference['kind'], name: string | undefined, via: string) => {
    if (name) refs.push({ kind, name, via });
  };
  add('ServiceAccount', str(pod['serviceAccountName']) ?? str(pod['serviceAccount']), 'serviceAccountName');
  for (const c of [...list(pod['initContainers']), ...list(pod['containers'])]) {
    const where = `containers[${String(c['name'])}]`;
    for (const from of list(c['envFrom'])) {
      add('ConfigMap', str(at(from, 'configMapRef', 'name')), `${where}.envFrom`);
      add('Secret', str(at(from, 'secretRef', 'name')), `${where}.envFrom`);
    }
    for (const env of list(c['env'])) {
      add('ConfigMap', str(at(env, 'valueFrom', 'configMapKeyRef', 'name')), `${where}.env[${String(env['name'])}]`);
      add('Secret', str(at(env, 'valueFrom', 'secretKeyRef', 'name')), `${where}.env[${String(env['name'])}]`);
    }
  }
  for (const v of list(pod['volumes'])) {
    const where = `volumes[${String(v['name'])}]`;
    add('ConfigMap', str(at(v, 'configMap', 'name')), where);
    add('Secret', str(at(v, 'secret', 'secretName')), where);
    add('PersistentVolumeClaim', str(at(v, 'persistentVolumeClaim', 'claimName')), where);
    for (const source of list(at(v, 'projected', 'sources'))) {
      add('ConfigMap', str(at(source, 'configMap', 'name')), where);
      add('Secret', str(at(source, 'secret', 'name')), where);
    }
  }
  return refs;
}

/**
 * One message per reference of a hook to an object of the same chart that is not created before the
 * hook runs. References to objects the chart does not render (existingSecret, your own Secrets in
 * extraVolumes) are external and assumed to exist.
 */
export function hookOrderViolations(objs: Manifest[]): string[] {
  const rendered = new Map(objs.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  const problems: string[] = [];
  for (const o of objs) {
    const hook = hookOf(o);
    const pod = podSpecOf(o);
    if (!hook || !pod) continue;
    for (const ref of referencesOf(pod)) {
      const target = rendered.get(`${ref.kind}/${ref.name}`);
      if (!target) continue;
      const targetHook = hookOf(target);
      for (const event of hook.events) {
        const user = `${o.kind}/${o.metadata.name} (${event}, weight ${hook.weight}) uses ${ref.kind}/${ref.name} in ${ref.via}`;
        if (targetHook) {
          if (!targetHook.events.includes(event)) problems.push(`${user}, a hook of ${targetHook.events.join(',')} only`);
          else if (targetHook.weight >= hook.weight) problems.push(`${user}, a hook of weight ${targetHook.weight}: not created before it`);
        } else if (BEFORE_RELEASE_OBJECTS.includes(event)) {
          problems.push(`${user}, which is not a hook: Helm creates or updates it only after the ${event} hooks ran`);
        }
      }
    }
  }
  return problems;
}
