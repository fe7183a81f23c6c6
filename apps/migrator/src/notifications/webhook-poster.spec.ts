import { createServer, IncomingMessage, Server } from 'http';
import { AddressInfo } from 'net';
import { verifySignature } from '@timer/callback';
import { UndiciWebhookPoster } from './webhook-poster';

describe('UndiciWebhookPoster', () => {
  let server: Server;
  let url = '';
  const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
  let status = 204;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/failures`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('POSTs the JSON body with the webhook\'s headers, signed with the app\'s secret', async () => {
    const poster = new UndiciWebhookPoster(true);
    const body = JSON.stringify({ notifications: [{ fireId: '1-2' }] });
    expect(await poster.post({ url, headers: { Authorization: 'Bearer x' } }, body, 'secret')).toEqual({ ok: true, status: 204 });
    const got = seen[seen.length - 1];
    expect(got.body).toBe(body);
    expect(got.headers['authorization']).toBe('Bearer x');
    expect(got.headers['content-type']).toBe('application/json');
    expect(verifySignature('secret', String(got.headers['x-timer-signature']), body, 60_000)).toBe(true);
    expect(verifySignature('other', String(got.headers['x-timer-signature']), body, 60_000)).toBe(false);

    status = 500;
    expect(await poster.post({ url }, body, null)).toEqual({ ok: false, retryable: true, error: 'HTTP 500' });
    expect(seen[seen.length - 1].headers['x-timer-signature']).toBeUndefined();
    await poster.close();
  });

  it('refuses a private address unless allowed (the callbacks\' policy), without retrying', async () => {
    const poster = new UndiciWebhookPoster(false);
    const before = seen.length;
    const result = await poster.post({ url }, '{}', 'secret');
    expect(result).toMatchObject({ ok: false, retryable: false });
    expect(seen.length).toBe(before);
    await poster.close();
  });
});
