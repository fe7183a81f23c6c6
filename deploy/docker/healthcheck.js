// Container health check: the role's liveness endpoint on its own port (8080 in the image).
const port = process.env.TIMER_HTTP_PORT || '8080';
fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(2500) })
  .then((res) => process.exit(res.ok ? 0 : 1))
  .catch(() => process.exit(1));
