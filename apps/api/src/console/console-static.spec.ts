import express from 'express';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { CONSOLE_PATH, consoleStatic } from './console-static';

const INDEX = '<!doctype html><title>console</title>';

function appServing(dir: string): express.Express {
  const app = express();
  app.use(CONSOLE_PATH, consoleStatic(dir));
  app.get('/api/ping', (_req, res) => {
    res.json({ code: 0 });
  });
  return app;
}

describe('consoleStatic', () => {
  let base: string;
  let dir: string;
  let app: express.Express;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'console-static-'));
    dir = join(base, 'build');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'index-abc123.css'), 'body{}');
    writeFileSync(join(base, 'secret.txt'), 'outside');
    app = appServing(dir);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it.each([
    ['/console/assets/index-abc123.js', 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
    ['/console/assets/index-abc123.css', 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
    ['/console/index.html', 'text/html; charset=utf-8', 'no-cache'],
  ])('serves %s as %s with the security headers', async (path, type, cache) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe(cache);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it.each(['/console/', '/console/timers', '/console/timers/42', '/console/assets'])('answers the app page %s with index.html (SPA fallback, no listing)', async (path) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toBe(INDEX);
  });

  it('redirects /console to /console/, keeping the query', async () => {
    const res = await request(app).get('/console?x=1');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/console/?x=1');
  });

  it.each(['/console/assets/missing.js', '/console/..%2fsecret.txt', '/console/%2e%2e/secret.txt', '/console/x/..%2f..%2fsecret.txt'])('answers 404 for a missing asset or a path outside the build (%s)', async (path) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('outside');
  });

  it('refuses writes (405) and leaves other routes alone', async () => {
    expect((await request(app).post('/console/timers')).status).toBe(405);
    expect((await request(app).get('/api/ping')).body).toEqual({ code: 0 });
  });

  it('answers 503 with a page saying how to build it when the build is absent', async () => {
    const res = await request(appServing(join(dir, 'nope'))).get('/console/timers');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('npm run build');
  });
});
