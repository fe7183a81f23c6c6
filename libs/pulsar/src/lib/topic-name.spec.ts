import { canonicalTopicName, parseTopicName, topicName, topicUrlPath } from './topic-name';

describe('topic names', () => {
  it('builds fully qualified names', () => {
    expect(topicName('timer', 'jobs', 'due')).toBe('persistent://timer/jobs/due');
    expect(topicName('t', 'n', 'x', 'non-persistent')).toBe('non-persistent://t/n/x');
    expect(() => topicName('a/b', 'n', 'x')).toThrow(TypeError);
    expect(() => topicName('t', '', 'x')).toThrow(TypeError);
  });

  it('parses the long, tenant/ns/topic and bare forms like Pulsar clients', () => {
    expect(parseTopicName('non-persistent://t/n/x')).toEqual({ domain: 'non-persistent', tenant: 't', namespace: 'n', local: 'x' });
    expect(canonicalTopicName('t/n/x')).toBe('persistent://t/n/x');
    expect(canonicalTopicName('x')).toBe('persistent://public/default/x');
    expect(() => parseTopicName('kafka://t/n/x')).toThrow(TypeError);
    expect(() => parseTopicName('persistent://t/x')).toThrow(TypeError);
  });

  it('URL-encodes each path segment', () => {
    expect(topicUrlPath('persistent://t/n/a b?c')).toBe('persistent/t/n/a%20b%3Fc');
  });
});
