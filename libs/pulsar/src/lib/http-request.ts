/**
 * A small HTTP(S) client for the admin REST API. It uses node:http/https rather than the global
 * fetch because fetch (undici) takes no per-request CA bundle or "allow insecure" flag without the
 * undici package, and TLS options must match the WebSocket sessions'.
 */
import * as http from 'node:http';
import * as https from 'node:https';

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Name/value pairs with the names' original case. */
  rawHeaders: string[];
  body: Buffer;
}

export interface HttpRequestOptions {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  tls?: { ca?: string; rejectUnauthorized: boolean };
}

export function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const headers: Record<string, string | number> = { Accept: 'application/json', ...options.headers };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(options.body);
  }
  const requestOptions: https.RequestOptions = { method: options.method, headers };
  if (secure && options.tls) {
    requestOptions.ca = options.tls.ca;
    requestOptions.rejectUnauthorized = options.tls.rejectUnauthorized;
  }
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = (secure ? https : http).request(target, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
