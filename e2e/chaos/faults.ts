import { localScript, pollUntil, Role, ROLES, Stack } from '../support';

export type FaultKind = `sigkill:${Role}` | 'redis-flushdb' | 'mariadb-restart' | 'broker-restart';

/** The order faults come in, over and over: a SIGKILL of each role, then a wipe of Redis, a MariaDB and a broker restart. */
export const FAULT_CYCLE: readonly FaultKind[] = [...ROLES.map((r) => `sigkill:${r}` as const), 'redis-flushdb', 'mariadb-restart', 'broker-restart'];

/** One injected fault. Times are epoch ms. */
export interface Fault {
  kind: FaultKind;
  /** What was hit: `#<index> pid <pid>` of the role for a SIGKILL. */
  target: string;
  start: number;
  /** When the part that failed was back: the killed process healthy again, the server ready. */
  end: number;
  /** False when the fault could not be injected as meant (see `note`): the run then proves less. */
  ok: boolean;
  note?: string;
}

/**
 * Injects the faults of a chaos run into a Stack. The servers are shared: MariaDB and the broker
 * are restarted through deploy/local (as the operator would), which disturbs every client of them, so
 * a run must have those servers to itself; Redis is wiped with FLUSHDB of the stack's own database
 * only, and only while that database holds nothing but the stack's keys.
 */
export class FaultInjector {
  constructor(
    private readonly stack: Stack,
    private readonly log: (line: string) => void,
    /** Keys under this prefix are the stack's (or an earlier run's): anything else in the database stops a FLUSHDB. */
    private readonly ownPrefix: string,
  ) {}

  async inject(kind: FaultKind): Promise<Fault> {
    const start = Date.now();
    try {
      if (kind.startsWith('sigkill:')) return await this.sigkill(kind.slice('sigkill:'.length) as Role, start);
      if (kind === 'redis-flushdb') return await this.flushRedis(start);
      if (kind === 'mariadb-restart') return await this.restartMariadb(start);
      return await this.restartBroker(start);
    } catch (e) {
      return { kind, target: '-', start, end: Date.now(), ok: false, note: (e as Error).message.split('\n')[0] };
    }
  }

  /** SIGKILL of a random process of the role, restarted at once (as a supervisor would) on its port. */
  private async sigkill(role: Role, start: number): Promise<Fault> {
    const members = this.stack.members(role);
    const victim = members[Math.floor(Math.random() * members.length)];
    await this.stack.killMember(role, victim.index, 'SIGKILL');
    const killedMs = Date.now() - start;
    await this.stack.restartMember(role, victim.index);
    return { kind: `sigkill:${role}`, target: `#${victim.index} pid ${victim.pid}`, start, end: Date.now(), ok: true, note: `killed in ${killedMs} ms` };
  }

  private async flushRedis(start: number): Promise<Fault> {
    const redis = this.stack.redis();
    const db = new URL(this.stack.redisUrl).pathname.slice(1);
    const foreign = await this.foreignKey();
    if (foreign !== undefined) {
      return { kind: 'redis-flushdb', target: `db ${db}`, start, end: Date.now(), ok: false, note: `not flushed: db ${db} holds ${foreign}, which is not a chaos run's` };
    }
    const keys = await redis.dbsize();
    await redis.flushdb();
    return { kind: 'redis-flushdb', target: `db ${db}`, start, end: Date.now(), ok: true, note: `${keys} keys` };
  }

  /** A key of the stack's Redis database that is not under `ownPrefix`, if there is one. */
  async foreignKey(): Promise<string | undefined> {
    const redis = this.stack.redis();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      const other = keys.find((k) => !k.startsWith(this.ownPrefix));
      if (other !== undefined) return other;
      cursor = next;
    } while (cursor !== '0');
    return undefined;
  }

  /**
   * deploy/local/mariadb.sh restart: stops the server through this checkout's pid file and starts it
   * again on the same data. When another checkout started the server, the script does nothing (and
   * says "already listens"): the server's uptime tells whether it really restarted.
   */
  private async restartMariadb(start: number): Promise<Fault> {
    const run = await localScript('mariadb.sh', ['restart'], 240_000);
    const end = Date.now();
    if (run.status !== 0) return { kind: 'mariadb-restart', target: 'server', start, end, ok: false, note: `mariadb.sh restart exited ${run.status}: ${lastLine(run.output)}` };
    const uptime = await pollUntil(() => this.uptimeSeconds().catch(() => undefined), 60_000, 500);
    const restarted = uptime !== undefined && uptime <= Math.ceil((Date.now() - start) / 1000) + 1;
    return {
      kind: 'mariadb-restart',
      target: 'server',
      start,
      end,
      ok: restarted,
      note: restarted ? `up ${uptime} s after` : `not restarted (uptime ${uptime} s): ${lastLine(run.output)}`,
    };
  }

  private async uptimeSeconds(): Promise<number> {
    const [row] = await this.stack.sql<{ Value: string }>("SHOW GLOBAL STATUS LIKE 'Uptime'");
    return Number(row.Value);
  }

  /** deploy/local/pulsar.sh restart (also restarts a broker another checkout of the project started). */
  private async restartBroker(start: number): Promise<Fault> {
    this.log('broker restart: the roles lose their WebSocket sessions until it is back');
    const run = await localScript('pulsar.sh', ['restart'], 300_000);
    return { kind: 'broker-restart', target: 'broker', start, end: Date.now(), ok: run.status === 0, note: run.status === 0 ? undefined : `pulsar.sh restart exited ${run.status}: ${lastLine(run.output)}` };
  }
}

const lastLine = (s: string) => s.trim().split('\n').pop()?.slice(0, 200) ?? '';
