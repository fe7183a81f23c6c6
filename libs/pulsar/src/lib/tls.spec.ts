import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeWsBroker } from '../../test/fake-ws-broker';
import { resolveSettings } from './connection-settings';
import { PulsarConnectError } from './errors';
import { PulsarAdmin } from './pulsar-admin';
import { WsProducer } from './ws-producer';

/** A self-signed certificate for 127.0.0.1, made with the openssl CLI. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'pulsar-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('TLS (wss/https against a self-signed broker)', () => {
  const tls = selfSigned();
  let broker: FakeWsBroker;

  beforeAll(async () => {
    broker = new FakeWsBroker({
      tls,
      onFrame: (s, f) => {
        const { context } = JSON.parse(f) as { context: string };
        s.ws.send(JSON.stringify({ result: 'ok', messageId: 'm', context }));
      },
    });
    await broker.start();
  });

  afterAll(() => broker.stop());

  it('derives wss from an https service URL and trusts the given CA', async () => {
    const settings = resolveSettings({ serviceUrl: broker.url, tlsCaPem: tls.cert });
    expect(settings.wsBase).toBe(`wss://127.0.0.1:${broker.port}`);
    const producer = new WsProducer(settings, { topic: 't/n/x' });
    await producer.start();
    await expect(producer.send({ payload: 'secure' })).resolves.toBe('m');
    await producer.close();
  });

  it('refuses an untrusted certificate at once, and accepts it when told to allow insecure', async () => {
    const untrusted = new WsProducer(resolveSettings({ serviceUrl: broker.url, operationTimeoutMs: 10_000 }), { topic: 't/n/x' });
    const started = Date.now();
    const error = await untrusted.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarConnectError);
    expect((error as PulsarConnectError).retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);

    const insecure = new WsProducer(resolveSettings({ serviceUrl: broker.url, tlsAllowInsecure: true }), { topic: 't/n/x' });
    await insecure.start();
    await expect(insecure.send({ payload: 'x' })).resolves.toBe('m');
    await insecure.close();
  });

  it('uses the same trust settings for admin calls', async () => {
    const server = https.createServer(tls, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await expect(new PulsarAdmin({ serviceUrl: url, tlsCaPem: tls.cert }).health()).resolves.toMatchObject({ healthy: true });
      await expect(new PulsarAdmin({ serviceUrl: url }).health()).resolves.toMatchObject({ healthy: false });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
