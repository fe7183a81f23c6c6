import { isIP } from 'net';
import { guardedLookup, isPrivateAddress, PrivateAddressError, signatureHeader } from '@timer/callback';
import { FailureWebhook } from '@timer/dal';
import { Agent, request } from 'undici';

/** One POST's outcome: delivered (2xx), worth another try later, or refused for good (a private address). */
export type PostResult = { ok: true; status: number } | { ok: false; retryable: boolean; error: string };

/** The injectable seam of the notifier: posts one signed JSON body to a webhook. */
export abstract class WebhookPoster {
  abstract post(webhook: FailureWebhook, body: string, signingSecret: string | null): Promise<PostResult>;
}

const TIMEOUT_MS = 10_000;

/**
 * Posts failure notifications over undici, signed like callbacks (`X-Timer-Signature` with the app's
 * signing secret, `libs/callback`), under the callbacks' address policy: loopback and private
 * addresses are refused (literal hosts here, resolved names at connect time) unless allowed.
 */
export class UndiciWebhookPoster extends WebhookPoster {
  private readonly agent: Agent;

  constructor(private readonly allowPrivate: boolean) {
    super();
    this.agent = new Agent({ connections: 8, keepAliveTimeout: 30_000, connect: allowPrivate ? { timeout: TIMEOUT_MS } : { timeout: TIMEOUT_MS, lookup: guardedLookup } });
  }

  async post(webhook: FailureWebhook, body: string, signingSecret: string | null): Promise<PostResult> {
    const headers: Record<string, string | string[]> = { ...(webhook.headers ?? {}), 'content-type': 'application/json', 'user-agent': 'timer-service/0.1' };
    if (signingSecret) headers['x-timer-signature'] = signatureHeader(signingSecret, Date.now(), body);
    try {
      const host = new URL(webhook.url).hostname.replace(/^\[|\]$/g, '');
      if (!this.allowPrivate && isIP(host) && isPrivateAddress(host)) throw new PrivateAddressError(host, host);
      const res = await request(webhook.url, { method: 'POST', headers, body, dispatcher: this.agent, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode };
      return { ok: false, retryable: true, error: `HTTP ${res.statusCode}` };
    } catch (e) {
      const cause = (e as { cause?: unknown }).cause;
      if (e instanceof PrivateAddressError || cause instanceof PrivateAddressError) return { ok: false, retryable: false, error: (cause instanceof PrivateAddressError ? cause : (e as Error)).message };
      return { ok: false, retryable: true, error: (e as Error).message };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
