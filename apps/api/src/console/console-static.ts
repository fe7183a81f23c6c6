import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Where the console is served (same origin as the API, so no CORS). */
export const CONSOLE_PATH = '/console';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * The console is static and same-origin: nothing inline, no frames, no third-party hosts. A violation
 * shows up as a browser console error, which the browser tests fail on.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head><body>' +
  '<h1>The web console is not built</h1><p>This api serves the console from its build output, which is missing. ' +
  'Run <code>npm run build</code> (or set TIMER_CONSOLE_DIR to a built console) and restart the api.</p></body></html>';

const NOT_FOUND = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><h1>Not found</h1></body></html>';

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves the built console (`dir`: Vite's output) under CONSOLE_PATH, mounted with `use(CONSOLE_PATH, ...)`
 * ahead of the API's routes and outside its auth (the files hold no data; every API call carries the
 * token). A path naming a file serves it with its content type; any other path without an extension is
 * a page of the single-page app and gets index.html; a missing asset answers 404, never a directory
 * listing. Without a build the console answers 503 with a page saying how to build it, and the API is
 * unaffected.
 */
export function consoleStatic(dir: string): RequestHandler {
  const root = resolve(dir);
  const index = resolve(root, 'index.html');
  return (req: Request, res: Response, next: NextFunction): void => {
    void serve(req, res).catch(next);
  };

  async function serve(req: Request, res: Response): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      res.status(405).type('text/plain').send('method not allowed');
      return;
    }
    // `/console` itself: the app's links are relative to `/console/`.
    if (req.originalUrl === CONSOLE_PATH || req.originalUrl.startsWith(`${CONSOLE_PATH}?`)) {
      res.redirect(301, `${CONSOLE_PATH}/${req.originalUrl.slice(CONSOLE_PATH.length)}`);
      return;
    }
    if (!(await isFile(index))) {
      res.status(503).setHeader('Cache-Control', 'no-store');
      res.type('html').send(NOT_BUILT);
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(req.path);
    } catch {
      res.status(400).type('text/plain').send('malformed path');
      return;
    }
    const file = resolve(root, `.${rel}`);
    const inside = (file === root || file.startsWith(root + sep)) && !rel.includes('\0');
    if (inside && (await isFile(file))) {
      const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
      // Vite names its assets by content hash: they never change under one name.
      const immutable = rel.startsWith('/assets/');
      res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.status(200).type(type).send(await readFile(file));
      return;
    }
    if (!inside || extname(rel) !== '') {
      res.status(404).type('html').send(NOT_FOUND);
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.status(200).type(CONTENT_TYPES['.html']).send(await readFile(index));
  }
}
