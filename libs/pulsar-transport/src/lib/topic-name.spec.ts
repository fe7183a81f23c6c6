import { resolveTopicName } from './topic-name';

describe('resolveTopicName', () => {
  it('resolves local, short and full names', () => {
    const defaults = { tenant: 'acme', namespace: 'jobs' };
    expect(resolveTopicName('timer.due', defaults)).toBe('persistent://acme/jobs/timer.due');
    expect(resolveTopicName('t/ns/x', defaults)).toBe('persistent://t/ns/x');
    expect(resolveTopicName('non-persistent://t/ns/x', defaults)).toBe('non-persistent://t/ns/x');
    expect(resolveTopicName('x')).toBe('persistent://public/default/x');
  });

  it('rejects what is no topic', () => {
    expect(() => resolveTopicName('a/b')).toThrow(/Cannot map pattern "a\/b"/);
    expect(() => resolveTopicName('')).toThrow(/non-empty/);
    expect(() => resolveTopicName('{"cmd":"x"}')).toThrow(/topic "\{"cmd":"x"\}" may only use/);
    expect(() => resolveTopicName('http://a/b/c')).toThrow(/Cannot map pattern/);
    expect(() => resolveTopicName('persistent://a/b')).toThrow(/Cannot map pattern/);
    expect(() => resolveTopicName('x', { tenant: 'a b', namespace: 'n' })).toThrow(/tenant "a b"/);
  });
});
