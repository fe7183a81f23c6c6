import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort } from '@timer/testing';

/** Where deploy/local/mariadb.sh finds them (apt's mariadb-server): on PATH, or in the sbin dirs. */
function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/usr/bin'];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

export const MARIADB_BINARIES = { server: findBinary('mariadbd'), installDb: findBinary('mariadb-install-db') };

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/**
 * A MariaDB of its own for a test that must not touch the shared one on 3306: a temp datadir
 * (mariadb-install-db), a free loopback port, TLS with a CA and a server certificate made by openssl
 * (named db.timer.test only, so "localhost" is a name it does not carry), and a second CA that
 * signed nothing of it. No grant tables: any user connects without a password. `stop` kills it and
 * removes everything.
 */
export class ThrowawayMariadb {
  readonly dir = mkdtempSync(join(tmpdir(), 'timer-tls-mariadb-'));
  port = 0;
  private child?: ChildProcess;

  get caFile(): string {
    return join(this.dir, 'ca.pem');
  }

  get otherCaFile(): string {
    return join(this.dir, 'other-ca.pem');
  }

  async start(timeoutMs = 20_000): Promise<void> {
    const { server, installDb } = MARIADB_BINARIES;
    if (!server || !installDb) throw new Error('mariadbd / mariadb-install-db not found');
    this.makeCertificates();
    execFileSync(installDb, ['--no-defaults', `--datadir=${join(this.dir, 'data')}`, `--user=${userInfo().username}`, '--auth-root-authentication-method=socket', '--skip-test-db'], {
      stdio: 'pipe',
    });
    this.port = await freePort();
    this.child = spawn(
      server,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--user=${userInfo().username}`,
        '--bind-address=127.0.0.1',
        `--port=${this.port}`,
        `--socket=${join(this.dir, 'mariadbd.sock')}`,
        `--pid-file=${join(this.dir, 'mariadbd.pid')}`,
        `--log-error=${join(this.dir, 'error.log')}`,
        '--skip-grant-tables',
        '--skip-log-bin',
        '--innodb-buffer-pool-size=16M',
        `--ssl-ca=${this.caFile}`,
        `--ssl-cert=${join(this.dir, 'server.pem')}`,
        `--ssl-key=${join(this.dir, 'server.key')}`,
      ],
      { stdio: 'ignore' },
    );
    const child = this.child;
    const listening = async () => {
      if (child.exitCode !== null) throw new Error(`mariadbd exited with ${child.exitCode}`);
      return accepts(this.port);
    };
    await eventually('the throwaway mariadbd to listen', listening, timeoutMs, 200).catch((e: Error) => {
      throw new Error(`${e.message}:\n${this.errorLog().slice(-2000)}`);
    });
  }

  url(query = ''): string {
    return `mysql://root@127.0.0.1:${this.port}/mysql${query}`;
  }

  errorLog(): string {
    return existsSync(join(this.dir, 'error.log')) ? readFileSync(join(this.dir, 'error.log'), 'utf8') : '';
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private makeCertificates(): void {
    const d = this.dir;
    const subj = (cn: string) => ['-subj', `/CN=${cn}`];
    openssl(d, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', ...subj('timer test CA')]);
    openssl(d, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '2', ...subj('timer other CA')]);
    openssl(d, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', ...subj('timer test server')]);
    writeFileSync(join(d, 'san.cnf'), 'subjectAltName=DNS:db.timer.test\n');
    openssl(d, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.cnf']);
  }
}
