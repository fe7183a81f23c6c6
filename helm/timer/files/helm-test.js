// `helm test`: the api answers /health through its Service, and a timer can be created (disabled, so it
// never fires), read back and deleted. Node's own fetch, so it runs in the service's image.
// Environment: TIMER_TEST_URL (the api Service), TIMER_TEST_APP, TIMER_ADMIN_TOKEN (optional).
const base = process.env.TIMER_TEST_URL;
const app = process.env.TIMER_TEST_APP;
const token = process.env.TIMER_ADMIN_TOKEN;
const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };

async function call(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok || json === undefined || (json.code !== undefined && json.code !== 0)) {
    throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  }
  return json;
}

async function main() {
  await call('GET', '/health');
  const name = `helm-test-${Date.now()}`;
  const created = await call('POST', '/api/timer/v1/def', {
    app,
    name,
    cron: '0 0 1 1 *',
    notifyHTTPParam: { url: 'https://example.com/timer-helm-test', method: 'POST' },
  });
  const id = created.id;
  if (id === undefined) throw new Error(`create answered no id: ${JSON.stringify(created)}`);
  try {
    const got = await call('GET', `/api/timer/v1/def?id=${encodeURIComponent(id)}&app=${encodeURIComponent(app)}`);
    if (got.data?.name !== name) throw new Error(`GET answered ${JSON.stringify(got).slice(0, 300)}, not timer ${name}`);
  } finally {
    await call('DELETE', '/api/timer/v1/def', { id, app });
  }
  process.stdout.write(`ok: /health answered; timer ${id} of app ${app} created, read and deleted\n`);
}

main().catch((e) => {
  process.stderr.write(`helm test failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
