/**
 * What the WebSocket driver and the admin client share: resolved options, URLs, auth headers and
 * TLS settings. Derived once per client from `PulsarClientOptions`.
 */
import type { PulsarClientOptions, PulsarLogger } from './pulsar-client.interface';

export const NOOP_LOGGER: PulsarLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

export interface ConnectionSettings {
  /** `http(s)://host:port[/prefix]` without a trailing slash. */
  httpBase: string;
  /** `ws(s)://host:port[/prefix]` without a trailing slash. */
  wsBase: string;
  headers: Record<string, string>;
  tls: { ca?: string; rejectUnauthorized: boolean };
  connectTimeoutMs: number;
  operationTimeoutMs: number;
  reconnectInitialDelayMs: number;
  reconnectMaxDelayMs: number;
  sendTimeoutMs: number;
  keepAliveIntervalMs: number;
  logger: PulsarLogger;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number, got ${value}`);
  return value;
}

export function resolveSettings(options: PulsarClientOptions): ConnectionSettings {
  let url: URL;
  try {
    url = new URL(options.serviceUrl);
  } catch {
    throw new TypeError(`invalid Pulsar serviceUrl '${options.serviceUrl}'`);
  }
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
    throw new TypeError(`Pulsar serviceUrl must be http(s):// (the web service port), got '${options.serviceUrl}'`);
  }
  const hostAndPath = `${url.host}${url.pathname.replace(/\/+$/, '')}`;
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const reconnectInitialDelayMs = nonNegative('reconnectInitialDelayMs', options.reconnectInitialDelayMs, 100) || 1;
  return {
    httpBase: `${secure ? 'https' : 'http'}://${hostAndPath}`,
    wsBase: `${secure ? 'wss' : 'ws'}://${hostAndPath}`,
    headers,
    tls: { ca: options.tlsCaPem, rejectUnauthorized: !options.tlsAllowInsecure },
    connectTimeoutMs: nonNegative('connectTimeoutMs', options.connectTimeoutMs, 10_000) || 10_000,
    operationTimeoutMs: nonNegative('operationTimeoutMs', options.operationTimeoutMs, 30_000),
    reconnectInitialDelayMs,
    reconnectMaxDelayMs: Math.max(reconnectInitialDelayMs, nonNegative('reconnectMaxDelayMs', options.reconnectMaxDelayMs, 1_000)),
    sendTimeoutMs: nonNegative('sendTimeoutMs', options.sendTimeoutMs, 30_000),
    keepAliveIntervalMs: nonNegative('keepAliveIntervalMs', options.keepAliveIntervalMs, 30_000),
    logger: options.logger ?? NOOP_LOGGER,
  };
}
