import { redact, redactValue } from './redact';

/** The properties TypeORM's QueryFailedError and mysql2's errors carry besides the message. */
class QueryFailedLike {
  query = 'INSERT INTO timers VALUES (?)';
  parameters = ['hidden-param'];
  sql = "INSERT INTO timers VALUES ('hidden-param')";
}

describe('redact', () => {
  it('masks URL passwords, bearer tokens, SQL parameters and quoted row values', () => {
    expect(redact('connect mysql://timer:Pw0rd@db:3306/x failed')).toBe('connect mysql://timer:***@db:3306/x failed');
    expect(redact('callback https://user:tok@example.com/hook refused')).toBe('callback https://user:***@example.com/hook refused');
    expect(redact('sent Authorization: Bearer abc.def-123, got 401')).toBe('sent Authorization: Bearer ***, got 401');
    expect(redact('query failed: INSERT INTO t VALUES (?) -- PARAMETERS: ["{\\"body\\":\\"s3cret\\"}"]')).toBe('query failed: INSERT INTO t VALUES (?)');
    expect(redact("Duplicate entry 'app-Secret name' for key 'uk_app_live_name'")).toBe("Duplicate entry '?' for key 'uk_app_live_name'");
    expect(redact("Incorrect string value: '\\xF0\\x9F' for column 'x'")).toBe("Incorrect string value: '?' for column 'x'");
  });

  it('leaves ordinary lines alone', () => {
    const line = 'api listening on http://127.0.0.1:8092 (health: /health, metrics: /metrics)';
    expect(redact(line)).toBe(line);
  });
});

describe('redactValue', () => {
  it('prints an error without the properties drivers attach', () => {
    const e = Object.assign(new Error("Duplicate entry 'x-1' for key 'uk'"), new QueryFailedLike());
    const out = String(redactValue(e));
    expect(out).toMatch(/^Error: Duplicate entry '\?' for key 'uk'\n\s+at /);
    expect(out).not.toContain('hidden-param');
    expect(out).not.toContain('x-1');
  });

  it('drops secret-named keys of objects, however deep', () => {
    expect(redactValue({ a: 1, nested: { headers: { 'X-Key': 'v' }, body: 'b', url: 'mysql://u:p@h/db' } })).toEqual({
      a: 1,
      nested: { headers: '***', body: '***', url: 'mysql://u:***@h/db' },
    });
  });
});
