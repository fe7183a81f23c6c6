import { FireSpan } from '@timer/platform';

/** Ends `span` when `work` settles: with an attribute of its result (and an error when `failed` names one), or its error. */
export function endedWith<T>(
  span: FireSpan,
  work: Promise<T>,
  attribute: (r: T) => [string, string | number],
  failed: (r: T) => string | undefined = () => undefined,
): Promise<T> {
  return work.then(
    (r) => {
      span.setAttribute(...attribute(r));
      span.end(failed(r));
      return r;
    },
    (e: unknown) => {
      span.end((e as Error).message);
      throw e;
    },
  );
}
