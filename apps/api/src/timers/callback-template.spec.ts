import { NotifyHttpParam } from '@timer/dal';
import { ApiError } from '../common/errors';
import { checkCallbackTemplate } from './callback-template';

function refusal(n: NotifyHttpParam, allowPrivate = false): string {
  try {
    checkCallbackTemplate(n, allowPrivate);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return (e as Error).message;
  }
  throw new Error('expected a 400');
}

const base: NotifyHttpParam = { url: 'https://h.example/t', method: 'POST', template: true };

describe('checkCallbackTemplate', () => {
  it('accepts known placeholders everywhere', () => {
    expect(() =>
      checkCallbackTemplate({ ...base, url: 'https://h.example/{{app}}/{{timerId}}?at={{scheduledAtIso}}', header: { 'X-F': ['{{fireId}}'] }, body: '{"p":"{{previousScheduledAt}}","a":{{attempt}}}' }, false),
    ).not.toThrow();
  });

  it('checks nothing without template: true (the text is sent verbatim)', () => {
    expect(() => checkCallbackTemplate({ ...base, template: undefined, body: '{{nope}} {{' }, false)).not.toThrow();
  });

  it.each([
    ['body', { body: 'x {{nope}}' }, 'notifyHTTPParam.body: unknown placeholder {{nope}}'],
    ['url', { url: 'https://h.example/{{app' }, 'notifyHTTPParam.url: malformed placeholder'],
    ['a header value', { header: { 'X-A': ['ok', '{{Attempt}}'] } }, 'notifyHTTPParam.header.X-A: unknown placeholder {{Attempt}}'],
  ])('refuses an unknown or malformed placeholder in the %s, naming field and placeholder', (_, n, message) => {
    expect(refusal({ ...base, ...n })).toContain(message);
  });

  it('refuses a URL that would be too long once filled', () => {
    expect(refusal({ ...base, url: `https://h.example/${'{{app}}'.repeat(40)}` })).toContain('notifyHTTPParam.url, once its placeholders are filled, must be at most');
  });
});
