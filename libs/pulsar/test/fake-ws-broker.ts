/**
 * A stand-in for the Pulsar WebSocket proxy, for unit tests: a `ws` server on 127.0.0.1 that
 * records every session and frame, answers as the test scripts it, can refuse upgrades with an
 * HTTP status, drop sessions, and stop/start on the same port.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeSession {
  ws: WebSocket;
  /** Path and query of the upgrade request. */
  url: string;
  headers: http.IncomingHttpHeaders;
  frames: string[];
  closeCode?: number;
}

export interface FakeBrokerOptions {
  /** Called for each frame a client sends. */
  onFrame?: (session: FakeSession, frame: string) => void;
  tls?: { key: string; cert: string };
}

export class FakeWsBroker {
  readonly sessions: FakeSession[] = [];
  /** Refuse the next N upgrades with this status (and Jetty-like body). */
  refuse: { status: number; message: string; times: number } | undefined;
  port = 0;
  private server: http.Server | https.Server | undefined;
  private wss: WebSocketServer | undefined;

  constructor(private readonly options: FakeBrokerOptions = {}) {}

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  /** Frames of every session, in order of arrival per session. */
  get frames(): string[] {
    return this.sessions.flatMap((s) => s.frames);
  }

  get openSessions(): FakeSession[] {
    return this.sessions.filter((s) => s.ws.readyState === s.ws.OPEN);
  }

  async start(port = this.port): Promise<void> {
    const server = this.options.tls ? https.createServer(this.options.tls) : http.createServer();
    const wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      if (this.refuse && this.refuse.times > 0) {
        this.refuse.times--;
        const body = `<html><head><title>Error ${this.refuse.status} ${this.refuse.message}</title></head></html>`;
        socket.end(`HTTP/1.1 ${this.refuse.status} Refused\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session: FakeSession = { ws, url: req.url ?? '', headers: req.headers, frames: [] };
        this.sessions.push(session);
        ws.on('message', (data: Buffer) => {
          const frame = data.toString('utf8');
          session.frames.push(frame);
          this.options.onFrame?.(session, frame);
        });
        ws.on('close', (code) => {
          session.closeCode = code;
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    this.wss = wss;
  }

  /** Cuts every open session without a close handshake, like a broker crash. */
  dropAll(): void {
    for (const s of this.sessions) s.ws.terminate();
  }

  async stop(): Promise<void> {
    this.dropAll();
    this.wss?.close();
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

/** Waits until `predicate` holds, polling; fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
