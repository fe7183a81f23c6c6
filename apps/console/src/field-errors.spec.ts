import { fieldErrors } from './field-errors';

describe('fieldErrors', () => {
  it('splits the API validation message by the field each part names', () => {
    const msg = 'every must be at least 1s; got "0s"; notifyHTTPParam.url must be an absolute http or https URL; name must be longer than or equal to 1 characters';
    expect(fieldErrors(msg)).toEqual({
      every: 'every must be at least 1s; got "0s"',
      'notifyHTTPParam.url': 'notifyHTTPParam.url must be an absolute http or https URL',
      name: 'name must be longer than or equal to 1 characters',
    });
  });

  it('reads every field of one answer, a path followed by a colon too', () => {
    const msg = 'notifyHTTPParam.header: name "X Y" is not a valid header name (RFC 7230 token); retryPolicy.maxAttempts must not be greater than 10; jitterMs must be an integer';
    expect(Object.keys(fieldErrors(msg))).toEqual(['notifyHTTPParam.header', 'retryPolicy.maxAttempts', 'jitterMs']);
  });

  it('keeps a message about no field under ""', () => {
    expect(fieldErrors('property status should not exist')).toEqual({ '': 'property status should not exist' });
  });
});
