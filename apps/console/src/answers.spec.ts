import { answerOf, keepsAnswers } from './answers';

describe('kept answers', () => {
  const answer = (status: number) => ({ status, headers: { 'content-type': 'text/plain' }, body: `answer ${status}`, truncated: false });

  it('takes the latest attempt that has an answer', () => {
    const attempts = [
      { attempt: 1, startedAt: 1, response: answer(500) },
      { attempt: 3, startedAt: 3, response: null },
      { attempt: 2, startedAt: 2, response: answer(200) },
    ];
    expect(answerOf({ attempts })).toEqual(answer(200));
    expect(answerOf({ attempts: [{ attempt: 1, startedAt: 1, response: null }] })).toBeUndefined();
  });

  it('tells a service that keeps answers (response on attempts, null included) from one that does not', () => {
    expect(keepsAnswers([{ attempts: [{ attempt: 1, startedAt: 1, response: null } as never] }])).toBe(true);
    // An api without kept answers has no `response` on its attempts.
    expect(keepsAnswers([{ attempts: [{ attempt: 1, startedAt: 1 } as never] }])).toBe(false);
  });
});
