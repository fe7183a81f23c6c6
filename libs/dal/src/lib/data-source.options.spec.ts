import { dataSourceOptions, mysqlSslOptions } from './data-source.options';

describe('dataSourceOptions', () => {
  it('takes the connection from the URL, decoded, without TLS by default', () => {
    const o = dataSourceOptions('mysql://ti%3Amer:p%40ss@db:3307/timer', 5) as unknown as Record<string, unknown>;
    expect(o).toMatchObject({ host: 'db', port: 3307, username: 'ti:mer', password: 'p@ss', database: 'timer', poolSize: 5, ssl: undefined });
    expect(o.url).toBeUndefined();
    expect(o.maxQueryExecutionTime).toBeUndefined();
    expect((dataSourceOptions('mysql://u@db/timer', 1, { slowQueryMs: 800 }) as unknown as Record<string, unknown>).maxQueryExecutionTime).toBe(800);
  });

  it('verifies the chain with TLS on, and the host name when the host is a name and the mode asks for it', () => {
    expect(mysqlSslOptions({ host: 'db', sslMode: undefined }, __filename)).toMatchObject({ rejectUnauthorized: true, verifyIdentity: true, ca: expect.stringContaining('mysqlSslOptions') });
    expect(mysqlSslOptions({ host: 'db', sslMode: 'VERIFY_CA' }, __filename)).toMatchObject({ verifyIdentity: false });
    expect(mysqlSslOptions({ host: 'db', sslMode: 'REQUIRED' })).toEqual({ rejectUnauthorized: true, verifyIdentity: true });
    expect(mysqlSslOptions({ host: '10.0.0.5', sslMode: 'VERIFY_IDENTITY' })).toEqual({ rejectUnauthorized: true, verifyIdentity: false });
    expect(mysqlSslOptions({ host: 'db', sslMode: undefined })).toBeUndefined();
    expect(mysqlSslOptions({ host: 'db', sslMode: 'DISABLED' })).toBeUndefined();
  });
});
