import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { randomBytes } from 'crypto';
import { TransactionDeadlockError } from '@timer/dal';
import type { Request, Response } from 'express';
import { ApiError, ErrorCode, unavailable } from './errors';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

interface Rendered {
  status: number;
  code: number;
  msg: string;
  headers?: Record<string, string>;
  data?: Record<string, unknown>;
}

/**
 * Body-parser failures carry `type` and `status`; their message is safe to show when `expose` is set.
 * A body that does not decompress is passed on untyped: zlib's own error (`errno`, `code`), status 400.
 */
interface ParserError {
  type?: unknown;
  status?: unknown;
  expose?: unknown;
  message?: unknown;
  encoding?: unknown;
  charset?: unknown;
  errno?: unknown;
  code?: unknown;
}

/** An encoding or charset name as the client sent it, quoted, when it is short and printable. */
const named = (v: unknown): string => (typeof v === 'string' && /^[\x20-\x7e]{1,32}$/.test(v) ? JSON.stringify(v) : '(unreadable)');

/**
 * Body-parser failures (malformed, too deep or undecompressable JSON, too large, bad encoding or
 * charset) as the API's error. Nest turns a JSON SyntaxError into a generic 400 with the parser's
 * message before filters see it, so `HttpSetupService` converts these right after the parser, for
 * `/api/` paths; the filter converts those of later parsers (Nest's urlencoded one).
 */
export function parserError(e: unknown, req?: Request): ApiError | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const r = fromParser(e as ParserError, req);
  return r ? new ApiError(r.status, r.code as ErrorCode, r.msg) : undefined;
}

function fromParser(e: ParserError, req?: Request): Rendered | undefined {
  if (typeof e.status !== 'number' || e.status < 400 || e.status >= 500) return undefined;
  if (typeof e.type !== 'string') {
    if (e.status !== 400 || typeof e.errno !== 'number' || typeof e.code !== 'string') return undefined;
    const encoding = named(req?.headers['content-encoding']);
    return { status: 400, code: ErrorCode.UNDECODABLE_BODY, msg: `request body could not be decompressed (Content-Encoding ${encoding})` };
  }
  switch (e.type) {
    case 'entity.parse.failed':
      return { status: 400, code: ErrorCode.MALFORMED_JSON, msg: 'malformed JSON body' };
    case 'entity.too.deep':
      return { status: 400, code: ErrorCode.JSON_TOO_DEEP, msg: String(e.message) };
    case 'entity.refused':
      return { status: 400, code: ErrorCode.VALIDATION, msg: String(e.message) };
    case 'entity.too.large':
      return { status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, msg: 'request body too large' };
    case 'encoding.unsupported':
      return { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, msg: `unsupported Content-Encoding ${named(e.encoding)}: use identity, gzip, deflate or br` };
    case 'charset.unsupported':
      return { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, msg: `unsupported charset ${named(e.charset)}: use UTF-8` };
    default:
      return { status: e.status, code: e.status * 100, msg: e.expose === true && typeof e.message === 'string' ? e.message : 'bad request' };
  }
}

function fromHttpException(e: HttpException): Rendered {
  const status = e.getStatus();
  const body = e.getResponse();
  if (status === HttpStatus.BAD_REQUEST && typeof body === 'object' && body !== null && Array.isArray((body as { message?: unknown }).message)) {
    // ValidationPipe: one message per failed constraint, each naming its property path.
    const messages = (body as { message: unknown[] }).message.map(String);
    return { status, code: ErrorCode.VALIDATION, msg: messages.join('; ') };
  }
  if (status === HttpStatus.NOT_FOUND) return { status, code: ErrorCode.ROUTE_NOT_FOUND, msg: e.message };
  if (status >= 500) return { status, code: status * 100, msg: status === 503 ? 'service unavailable' : 'internal error' };
  return { status, code: status * 100, msg: e.message };
}

/**
 * The one global exception filter. Under `/api/` every error becomes the envelope
 * `{code, msg, requestId}` with a 4xx/5xx status; a 5xx never shows internals, only the correlation
 * id, which is also logged with the stack. Other paths (`/health`, `/metrics`) keep Nest's own
 * behaviour, since their bodies are consumed by probes.
 */
@Catch()
export class ApiExceptionFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const path = req.path ?? req.url ?? '';
    if (!path.startsWith('/api/') || path.startsWith('/api/docs')) return super.catch(exception, host);

    const requestId = this.requestId(req);
    const r = this.render(exception, req);
    if (r.status >= 500) {
      const detail = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
      this.logger.error(`[${requestId}] ${req.method} ${path} -> ${r.status}: ${detail}`);
    } else {
      this.logger.debug(`[${requestId}] ${req.method} ${path} -> ${r.status}: ${r.msg}`);
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.setHeader('X-Request-Id', requestId);
    for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
    res.status(r.status).json({ code: r.code, msg: r.msg, requestId, ...(r.data ? { data: r.data } : {}) });
  }

  private render(e: unknown, req: Request): Rendered {
    // Each attempt was rolled back whole (runInTransaction): nothing was written, and a retry can pass.
    if (e instanceof TransactionDeadlockError) e = unavailable('concurrent changes to the same timers or app kept deadlocking (nothing was written): retry');
    if (e instanceof ApiError) return { status: e.status, code: e.code, msg: e.message, headers: e.headers, data: e.data };
    if (e instanceof HttpException) return fromHttpException(e);
    if (typeof e === 'object' && e !== null) {
      const parsed = fromParser(e as ParserError, req);
      if (parsed) return parsed;
    }
    return { status: 500, code: ErrorCode.INTERNAL, msg: 'internal error' };
  }

  private requestId(req: Request): string {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomBytes(8).toString('hex');
  }
}
