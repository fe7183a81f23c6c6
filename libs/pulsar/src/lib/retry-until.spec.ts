import { PulsarAdminError, PulsarConnectError } from './errors';
import { isTransient, retryUntil } from './retry-until';

describe('retryUntil', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('retries transient failures until success', async () => {
    const fn = jest
      .fn<Promise<string>, []>()
      .mockRejectedValueOnce(new PulsarConnectError('refused'))
      .mockRejectedValueOnce(new PulsarAdminError('PUT', '/admin/v2/tenants/t', 503, 'unavailable'))
      .mockResolvedValue('ok');
    const warn = jest.fn();
    const result = retryUntil(fn, { what: 'provisioning', timeoutMs: 60_000, logger: { log: jest.fn(), warn, error: jest.fn() } });
    await jest.runAllTimersAsync();
    await expect(result).resolves.toBe('ok');
    expect(fn).toHaveBeenCalledTimes(3);
    expect(warn.mock.calls[0][0]).toMatch(/provisioning failed \(attempt 1\): refused; retrying in \d+ ms/);
  });

  it('fails at once on a request the broker refuses as wrong (4xx)', async () => {
    const fn = jest.fn().mockRejectedValue(new PulsarAdminError('PUT', '/admin/v2/tenants/t', 403, 'forbidden'));
    await expect(retryUntil(fn, { what: 'x', timeoutMs: 60_000 })).rejects.toThrow(/HTTP 403/);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('gives up with the last error once the budget is spent', async () => {
    const fn = jest.fn().mockRejectedValue(new PulsarConnectError('refused'));
    const result = retryUntil(fn, { what: 'x', timeoutMs: 3_000 });
    const settled = expect(result).rejects.toThrow('refused');
    await jest.runAllTimersAsync();
    await settled;
    // The delays are 0.7-1x of 250, 500, 1,000, 1,000 ms (jittered): 4 or 5 of them fit the 3 s budget.
    expect(fn.mock.calls.length).toBeGreaterThanOrEqual(5);
    expect(fn.mock.calls.length).toBeLessThanOrEqual(6);
  });

  it('classifies errors', () => {
    expect(isTransient(new PulsarConnectError('x', 404))).toBe(false);
    expect(isTransient(new PulsarConnectError('x', 502))).toBe(true);
    expect(isTransient(new PulsarAdminError('GET', '/', 0, 'timeout'))).toBe(true);
    expect(isTransient(new TypeError('fetch failed'))).toBe(true);
  });
});
