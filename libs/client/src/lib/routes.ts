/**
 * Every route of the api, keyed by its OpenAPI `operationId` (apps/api/src/docs/openapi.ts): the one
 * table the client's methods are named after. `test/client.int-spec.ts` compares it with the document
 * the running api serves, so a route added, moved or renamed there fails until it is added here.
 */
export const ROUTES = {
  createTimer: { method: 'POST', path: '/api/timer/v1/def' },
  createTimers: { method: 'POST', path: '/api/timer/v1/def/batch' },
  getTimer: { method: 'GET', path: '/api/timer/v1/def' },
  updateTimer: { method: 'PUT', path: '/api/timer/v1/def' },
  patchTimer: { method: 'PATCH', path: '/api/timer/v1/def' },
  deleteTimer: { method: 'DELETE', path: '/api/timer/v1/def' },
  listTimerVersions: { method: 'GET', path: '/api/timer/v1/def/versions' },
  listTimers: { method: 'GET', path: '/api/timer/v1/defs' },
  enableTimer: { method: 'POST', path: '/api/timer/v1/enable' },
  disableTimer: { method: 'POST', path: '/api/timer/v1/unable' },
  runTimer: { method: 'POST', path: '/api/timer/v1/run' },
  previewFireTimes: { method: 'GET', path: '/api/timer/v1/preview' },
  backfillTimer: { method: 'POST', path: '/api/timer/v1/backfill' },
  listRecords: { method: 'GET', path: '/api/task/v1/records' },
  createApp: { method: 'POST', path: '/api/app/v1/apps' },
  listApps: { method: 'GET', path: '/api/app/v1/apps' },
  listAppTokens: { method: 'GET', path: '/api/app/v1/tokens' },
  issueAppToken: { method: 'POST', path: '/api/app/v1/tokens' },
  revokeAppToken: { method: 'DELETE', path: '/api/app/v1/tokens' },
  rotateAppSecret: { method: 'POST', path: '/api/app/v1/secret' },
  pauseApp: { method: 'POST', path: '/api/app/v1/pause' },
  resumeApp: { method: 'POST', path: '/api/app/v1/resume' },
  getAppAccounting: { method: 'GET', path: '/api/app/v1/accounting' },
  getOverview: { method: 'GET', path: '/api/app/v1/overview' },
  setAppQuota: { method: 'PUT', path: '/api/app/v1/quota' },
  getAppQuota: { method: 'GET', path: '/api/app/v1/quota' },
  getProjectedLoad: { method: 'GET', path: '/api/app/v1/load' },
  listDeadLetters: { method: 'GET', path: '/api/app/v1/dlq' },
  replayDeadLetters: { method: 'POST', path: '/api/app/v1/dlq/replay' },
  purgeDeadLetters: { method: 'POST', path: '/api/app/v1/dlq/purge' },
  setFailureWebhook: { method: 'PUT', path: '/api/app/v1/failure-webhook' },
  createMaintenanceWindow: { method: 'POST', path: '/api/app/v1/maintenance' },
  listMaintenanceWindows: { method: 'GET', path: '/api/app/v1/maintenance' },
  deleteMaintenanceWindow: { method: 'DELETE', path: '/api/app/v1/maintenance' },
  getReadiness: { method: 'GET', path: '/health' },
  getLiveness: { method: 'GET', path: '/health/live' },
  getMetrics: { method: 'GET', path: '/metrics' },
} as const satisfies Record<string, { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string }>;

export type OperationId = keyof typeof ROUTES;
