// Validates Kubernetes objects (a JSON array on stdin) against the API schemas of kubernetes-models
// (the OpenAPI schemas of Kubernetes and of the CRDs the chart renders: KEDA, the Prometheus Operator,
// Gateway API). Prints a JSON array of problems, `<kind>/<name>: <message>`; an object of a kind
// without a schema is a problem too. A process of its own: the packages are ES modules, which Jest's
// module loader does not import.
const PACKAGES = {
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api',
};

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const problems = [];
for (const obj of JSON.parse(input)) {
  const where = `${obj.kind}/${obj.metadata?.name}`;
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0] : '';
  const module = `${PACKAGES[group] ?? 'kubernetes-models'}/${obj.apiVersion}/${obj.kind}`;
  let Model;
  try {
    Model = (await import(module))[obj.kind];
  } catch (e) {
    problems.push(`${where}: no schema (${module}: ${e.message})`);
    continue;
  }
  try {
    new Model(obj).validate();
  } catch (e) {
    problems.push(`${where}: ${e.message}`);
  }
}
process.stdout.write(JSON.stringify(problems));
