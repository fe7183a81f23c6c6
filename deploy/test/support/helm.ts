import { execFileSync } from 'child_process';
import { join } from 'path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './registered-metrics';

/** The chart under test and its CI values files. */
export const CHART = join(ROOT, 'helm', 'timer');
export const PROD_VALUES = join(CHART, 'ci', 'production-values.yaml');

// Rendered manifests are untyped YAML; the assertions of the specs are the schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };

let bin: string | undefined;

/** The real Helm: TIMER_HELM_BIN (npm test sets it), else built from its Go module by deploy/local/helm.sh. */
export function helmBin(): string {
  bin ??= process.env.TIMER_HELM_BIN || execFileSync('bash', [join(ROOT, 'deploy/local/helm.sh')], { encoding: 'utf8' }).trim();
  return bin;
}

export function helm(...args: string[]): string {
  return execFileSync(helmBin(), args, { encoding: 'utf8', cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `helm lint --strict` (with the chart's values.schema.json): its output and whether it passed. */
export function lint(...extra: string[]): { ok: boolean; output: string } {
  try {
    return { ok: true, output: helm('lint', '--strict', CHART, ...extra) };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** The objects `helm template` renders with these extra arguments (values files, --set). */
export function render(...extra: string[]): Obj[] {
  // Rendered for an explicit cluster version: Helm built by `go install` carries no release
  // ldflags and would assume Kubernetes 1.20, below the chart's kubeVersion.
  return parseAllDocuments(helm('template', 'timer', CHART, '--namespace', 'timers', '--kube-version', '1.30.0', ...extra))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/** The error of a `helm template` that must fail. */
export function renderError(...extra: string[]): string {
  try {
    render(...extra);
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
  throw new Error(`helm template ${extra.join(' ')} rendered, expected a failure`);
}

export const byKind = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);

export const named = (objs: Obj[], kind: string, name: string): Obj => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in [${objs.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}]`);
  return found;
};

/**
 * `--api-versions` of the custom resources the chart renders only when the cluster serves them (KEDA,
 * the Prometheus Operator, Gateway API): `helm template` knows no cluster.
 */
export const CRD_APIS = [
  'keda.sh/v1alpha1/ScaledObject',
  'keda.sh/v1alpha1/TriggerAuthentication',
  'monitoring.coreos.com/v1/ServiceMonitor',
  'monitoring.coreos.com/v1/PrometheusRule',
  'gateway.networking.k8s.io/v1/HTTPRoute',
].flatMap((api) => ['--api-versions', api]);

/**
 * Problems of the objects against the Kubernetes API schemas (and the CRDs' schemas), as
 * support/validate-k8s.mjs reports them (kubernetes-models); empty when all validate.
 */
export function schemaProblems(objs: Obj[]): string[] {
  const out = execFileSync(process.execPath, [join(__dirname, 'validate-k8s.mjs')], { input: JSON.stringify(objs), encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(out) as string[];
}
