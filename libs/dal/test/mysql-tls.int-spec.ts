import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src';
import { MARIADB_BINARIES, ThrowawayMariadb } from './throwaway-mariadb';

// MySQL over TLS against a MariaDB of the test's own (the shared one on 3306 runs without TLS and is
// not reconfigured): the DAL connects with TIMER_MYSQL_TLS_CA_FILE's CA and verifies the server.
const available = !!MARIADB_BINARIES.server && !!MARIADB_BINARIES.installDb;
if (!available) {
  console.warn('mysql-tls.int-spec: skipped, mariadbd / mariadb-install-db are not installed (deploy/local/mariadb.sh installs them)');
}

(available ? describe : describe.skip)('MySQL over TLS (a throwaway MariaDB with a self-signed CA)', () => {
  jest.setTimeout(30_000);
  const server = new ThrowawayMariadb();

  beforeAll(() => server.start());
  afterAll(() => server.stop());

  async function withDataSource<T>(url: string, caFile: string | undefined, fn: (ds: DataSource) => Promise<T>): Promise<T> {
    const ds = new DataSource({ ...dataSourceOptions(url, 1, { tlsCaFile: caFile }), migrations: [], entities: [] });
    await ds.initialize();
    try {
      return await fn(ds);
    } finally {
      await ds.destroy();
    }
  }

  const cipher = (ds: DataSource) => ds.query(`SHOW SESSION STATUS LIKE 'Ssl_cipher'`).then((r: { Value: string }[]) => r[0]?.Value ?? '');

  it('connects with the CA file and runs queries over TLS', async () => {
    expect(await withDataSource(server.url(), server.caFile, cipher)).not.toBe('');
    // VERIFY_CA (chain only) works too, and plain TCP is what no option at all still means.
    expect(await withDataSource(server.url('?ssl-mode=VERIFY_CA'), server.caFile, cipher)).not.toBe('');
    expect(await withDataSource(server.url(), undefined, cipher)).toBe('');
  });

  it('refuses a server whose certificate the CA did not sign', async () => {
    await expect(withDataSource(server.url(), server.otherCaFile, cipher)).rejects.toThrow(/self[- ]signed|unable to (get|verify)|certificate/i);
    // ssl-mode=REQUIRED verifies as well: against Node's public CAs, which did not sign it either.
    await expect(withDataSource(server.url('?ssl-mode=REQUIRED'), undefined, cipher)).rejects.toThrow(/self[- ]signed|unable to (get|verify)|certificate/i);
  });

  it('checks the host name unless ssl-mode=VERIFY_CA', async () => {
    // The certificate names db.timer.test only; "localhost" reaches the same server under another name.
    // (127.0.0.1 above is an address: mysql2 can only check the chain then, see mysqlSslOptions.)
    const byName = server.url().replace('127.0.0.1', 'localhost');
    await expect(withDataSource(byName, server.caFile, cipher)).rejects.toThrow(/altnames|does not match|hostname/i);
    expect(await withDataSource(`${byName}?ssl-mode=VERIFY_CA`, server.caFile, cipher)).not.toBe('');
  });
});
