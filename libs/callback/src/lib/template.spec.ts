import { fillCallback, fillTemplate, TemplateValues, templateProblem, usesPlaceholder } from './template';

const values: TemplateValues = {
  scheduledAt: '1767225600000',
  scheduledAtIso: '2026-01-01T00:00:00.000Z',
  previousScheduledAt: '',
  fireId: '42-1767225600000',
  attempt: '2',
  timerId: '42',
  app: 'billing',
};

describe('templateProblem', () => {
  it.each([
    ['no placeholder', '{"a":1}'],
    ['every placeholder', '{{scheduledAt}} {{scheduledAtIso}} {{previousScheduledAt}} {{fireId}} {{attempt}} {{timerId}} {{app}}'],
    ['a lone closing pair', 'x }} y'],
    ['JSON braces next to a placeholder', '{"at":{{scheduledAt}}}'],
  ])('accepts %s', (_, text) => expect(templateProblem(text)).toBeUndefined());

  it.each([
    ['an unknown name', 'x {{nope}} y', 'unknown placeholder {{nope}}'],
    ['a wrong case', '{{ScheduledAt}}', 'unknown placeholder {{ScheduledAt}}'],
    ['an unclosed one', 'a {{app', 'malformed placeholder at "{{app"'],
    ['spaces inside', '{{ app }}', 'malformed placeholder at "{{ app }}"'],
    ['an unknown one after a known one', '{{app}}{{x}}', 'unknown placeholder {{x}}'],
    ['an empty one', '{{}}', 'malformed placeholder'],
  ])('refuses %s, naming it', (_, text, problem) => expect(templateProblem(text)).toContain(problem));
});

describe('fillTemplate', () => {
  it('fills every occurrence and leaves the rest byte for byte', () => {
    expect(fillTemplate('{"at":{{scheduledAt}},"iso":"{{scheduledAtIso}}","again":{{scheduledAt}},"prev":"{{previousScheduledAt}}"} é', values)).toBe(
      '{"at":1767225600000,"iso":"2026-01-01T00:00:00.000Z","again":1767225600000,"prev":""} é',
    );
  });

  it('encodes values with the given encoder only', () => {
    expect(fillTemplate('?at={{scheduledAtIso}}', values, encodeURIComponent)).toBe('?at=2026-01-01T00%3A00%3A00.000Z');
  });

  it('tells which placeholders a text uses', () => {
    expect(usesPlaceholder('a {{previousScheduledAt}}', 'previousScheduledAt')).toBe(true);
    expect(usesPlaceholder('a {{scheduledAt}}', 'previousScheduledAt')).toBe(false);
    expect(usesPlaceholder(undefined, 'app')).toBe(false);
  });
});

describe('fillCallback', () => {
  it('fills the URL (encoded), header values (not names) and body; other fields stay', () => {
    const filled = fillCallback(
      { url: 'https://h.example/{{app}}/run?at={{scheduledAtIso}}&f={{fireId}}', method: 'POST', header: { 'X-{{app}}': ['{{attempt}}', 'a {{timerId}}'] }, body: '{{fireId}}', timeoutMs: 1000 },
      values,
    );
    expect(filled).toEqual({
      url: 'https://h.example/billing/run?at=2026-01-01T00%3A00%3A00.000Z&f=42-1767225600000',
      method: 'POST',
      header: { 'X-{{app}}': ['2', 'a 42'] },
      body: '42-1767225600000',
      timeoutMs: 1000,
    });
  });

  it('leaves an absent body and header absent', () => {
    expect(fillCallback({ url: 'https://h.example/' }, values)).toEqual({ url: 'https://h.example/' });
  });
});
