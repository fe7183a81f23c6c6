import { fillTemplate, TemplateValues, templateProblem } from '@timer/callback';
import { NotifyHttpParam } from '@timer/dal';
import { badRequest } from '../common/errors';
import { urlProblem } from '../common/validators';
import { isPrivateLiteralHost } from './callback-policy';

/** The longest value each placeholder can take: a URL filled with them must still be a valid callback URL. */
const LONGEST: TemplateValues = {
  scheduledAt: '253402300799999',
  scheduledAtIso: '9999-12-31T23:59:59.999Z',
  previousScheduledAt: '253402300799999',
  fireId: '18446744073709551615-253402300799999',
  attempt: '1000',
  timerId: '18446744073709551615',
  app: 'a'.repeat(64),
};

/**
 * The checks of a templated callback (`notifyHTTPParam.template: true`): every `{{` in the URL, the
 * header values and the body opens a known placeholder, and the URL filled with the longest values
 * still passes the callback URL rules. Throws a 400 naming the field and the placeholder.
 */
export function checkCallbackTemplate(n: NotifyHttpParam, allowPrivateCallbacks: boolean): void {
  if (n.template !== true) return;
  const refuse = (field: string, text: string | undefined) => {
    const problem = text === undefined ? undefined : templateProblem(text);
    if (problem !== undefined) throw badRequest(`notifyHTTPParam.${field}: ${problem}`);
  };
  refuse('url', n.url);
  for (const [name, values] of Object.entries(n.header ?? {})) for (const v of values) refuse(`header.${name}`, v);
  refuse('body', n.body);
  const filled = fillTemplate(n.url, LONGEST, encodeURIComponent);
  const problem = urlProblem(filled);
  if (problem !== undefined) throw badRequest(`notifyHTTPParam.url, once its placeholders are filled, ${problem}`);
  if (!allowPrivateCallbacks && isPrivateLiteralHost(filled)) {
    throw badRequest('notifyHTTPParam.url, once its placeholders are filled, points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
  }
}
