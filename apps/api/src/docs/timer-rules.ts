import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { MAX_CRON_FIRES } from '@timer/schedule';

/** The vendor extension of an operation listing its cross-field rules, for clients and a fuzzer's hooks. */
export const TIMER_RULES = 'x-timer-rules';

/**
 * A rule about several fields of one request (or about a field and the time of the request), which
 * JSON Schema cannot state. `text` is the rule in words (also appended to the operation's
 * description); the other properties say it for a program. A field is "given" when present and not
 * null (the API reads null and an empty query value as not given).
 * - `exactlyOne` / `atMostOne`: of `fields`, exactly one / at most one is given.
 * - `exactlyOneGroup`: exactly one of `groups` is given, and whole (every field of it).
 * - `requires`: when `field` is given (and not equal to `unless`, its default), every field of `fields` is given,
 *   and a number among them is > 0.
 * - `excludes`: when `field` is given, none of `fields` is.
 * - `before`: `field` < `than` (each with the default `text` names when not given).
 * - `maxSpan`: `to` - `from` <= `maxMs`.
 * - `future` / `notFuture`: the instant `field` is after now / at most now.
 * - `maxBuckets`: `bucketMs` cuts [`from`, `to`) into at most `max` buckets.
 * - `each`: every item of the array `field` follows `rules`.
 * - `distinct`: the items of the array `field` differ in `key`; `sameAs`: `field`, when given, equals `as`.
 * - `meaning`: the value of `field` must mean something (`kind`: a cron expression that fires, an IANA time
 *   zone, a callback URL the server may call): `text` says what.
 * - `fireOf`: the fire id `field` (`<timerId>-<runAtMs>`), with `timer` given, is a fire of that timer.
 * - `uniqueHeader`: the header `field`, once used in the app with one request, names that request only.
 * - `maxWith`: when `with` is given, `field` is at most `max`.
 * - `note`: a rule between `fields` and the server's state or configuration, in words only.
 */
export type TimerRule = { text: string } & (
  | { rule: 'exactlyOne' | 'atMostOne'; fields: string[] }
  | { rule: 'exactlyOneGroup'; groups: string[][] }
  | { rule: 'requires'; field: string; unless?: unknown; fields: string[] }
  | { rule: 'excludes'; field: string; fields: string[] }
  | { rule: 'before'; field: string; than: string }
  | { rule: 'maxSpan'; from: string; to: string; maxMs: number }
  | { rule: 'future' | 'notFuture'; field: string }
  | { rule: 'maxBuckets'; field: string; from: string; to: string; max: number }
  | { rule: 'each'; field: string; rules: TimerRule[] }
  | { rule: 'distinct'; field: string; key: string }
  | { rule: 'sameAs'; field: string; as: string }
  | { rule: 'uniqueHeader'; field: string }
  | { rule: 'fireOf'; field: string; timer: string }
  | { rule: 'maxWith'; field: string; with: string; max: number }
  | { rule: 'meaning'; field: string; kind: 'cron' | 'timeZone' | 'callbackUrl' | 'interval' | 'headerNames' }
  | { rule: 'note'; fields: string[] }
);

/** The rules of an operation: in the document as `x-timer-rules` (and in words in its description, see `tellTheTruth`). */
export const TimerRules = (...rules: TimerRule[]): MethodDecorator => applyDecorators(ApiExtension(TIMER_RULES, rules));

const CRON: TimerRule = { rule: 'meaning', field: 'cron', kind: 'cron', text: '`cron` must parse (5 or 6 fields, no `H`) and match some time in the coming years.' };
const ZONE: TimerRule = { rule: 'meaning', field: 'timeZone', kind: 'timeZone', text: '`timeZone` must be an IANA time zone the server knows, spelled as its name.' };

/** A schedule as create, PUT, PATCH and the preview take it. */
const schedule = (one: 'exactlyOne' | 'atMostOne'): TimerRule[] => [
  {
    rule: one,
    fields: ['cron', 'runAt', 'every'],
    text: one === 'exactlyOne' ? 'Give exactly one of `cron`, `runAt` and `every`.' : 'Give at most one of `cron`, `runAt` and `every` (one replaces the stored schedule).',
  },
  { rule: 'excludes', field: 'runAt', fields: ['startAt', 'endAt', 'maxFires'], text: '`startAt`, `endAt` and `maxFires` are for cron and every timers: not with `runAt`.' },
  { rule: 'requires', field: 'dstGap', unless: 'shift', fields: ['cron'], text: '`dstGap` other than `shift` needs `cron`.' },
  { rule: 'requires', field: 'dstOverlap', unless: 'first', fields: ['cron'], text: '`dstOverlap` other than `first` needs `cron`.' },
  { rule: 'before', field: 'startAt', than: 'endAt', text: '`endAt` must be after `startAt`.' },
  { rule: 'meaning', field: 'every', kind: 'interval', text: '`every` is 1s to 366d.' },
  CRON,
  ZONE,
];

/** What a write of a timer's definition adds to its schedule's rules. */
const definition: TimerRule[] = [
  { rule: 'future', field: 'runAt', text: '`runAt` must be in the future.' },
  { rule: 'future', field: 'endAt', text: '`endAt` must be in the future, and some fire of the schedule must lie in [max(now, startAt), endAt] (and among the first `maxFires`).' },
  { rule: 'maxWith', field: 'maxFires', with: 'cron', max: MAX_CRON_FIRES, text: `\`maxFires\` is at most ${MAX_CRON_FIRES} with \`cron\`.` },
  {
    rule: 'meaning',
    field: 'notifyHTTPParam.header',
    kind: 'headerNames',
    text: 'Header names (`notifyHTTPParam.header`, `failureWebhook.headers`, `resultWebhook.headers`) are RFC 7230 tokens, not Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer, Proxy-Connection, Expect nor X-Timer-*.',
  },
  { rule: 'meaning', field: 'failureWebhook.headers', kind: 'headerNames', text: 'The same for `failureWebhook.headers`.' },
  { rule: 'meaning', field: 'resultWebhook.headers', kind: 'headerNames', text: 'The same for `resultWebhook.headers`.' },
  { rule: 'requires', field: 'autoSpread', unless: false, fields: ['jitterMs'], text: '`autoSpread: true` needs `jitterMs` > 0.' },
  {
    rule: 'meaning',
    field: 'notifyHTTPParam.url',
    kind: 'callbackUrl',
    text: '`notifyHTTPParam.url` (and `failureWebhook.url`, `resultWebhook.url`) must not name a loopback or private address unless TIMER_CALLBACK_ALLOW_PRIVATE=true; `notifyHTTPParam.timeoutMs` is at most TIMER_CALLBACK_TIMEOUT_MAX_MS; `notifyHTTPParam.body` at most TIMER_CALLBACK_BODY_MAX_BYTES.',
  },
];

const IDEMPOTENCY: TimerRule = { rule: 'uniqueHeader', field: 'Idempotency-Key', text: 'An `Idempotency-Key` already used in the app with another body answers 422.' };

export const CREATE_RULES: TimerRule[] = [...schedule('exactlyOne'), ...definition, IDEMPOTENCY];
export const PATCH_RULES: TimerRule[] = [
  ...schedule('atMostOne').map((r) => (r.rule === 'excludes' || r.rule === 'requires' || r.rule === 'before' ? { ...r, text: `${r.text} The stored fields count as given.` } : r)),
  ...definition,
];
export const BATCH_RULES: TimerRule[] = [
  { rule: 'each', field: 'timers', rules: CREATE_RULES, text: 'Each item of `timers` follows the rules of a create.' },
  { rule: 'sameAs', field: 'timers[].app', as: 'app', text: "An item's `app`, when given, is the batch's `app`." },
  { rule: 'distinct', field: 'timers', key: 'name', text: "The items' names are distinct." },
  { rule: 'note', fields: ['timers'], text: 'At most TIMER_API_BATCH_MAX (default 500) items.' },
  IDEMPOTENCY,
];
export const PREVIEW_RULES: TimerRule[] = schedule('exactlyOne');

const range = (maxMs: number | undefined, defaults: string): TimerRule[] => [
  { rule: 'before', field: 'from', than: 'to', text: `\`from\` must be before \`to\` (${defaults}).` },
  ...(maxMs ? [{ rule: 'maxSpan', from: 'from', to: 'to', maxMs, text: `[from, to) spans at most ${maxMs / 1000} s.` } as TimerRule] : []),
];

export const BACKFILL_RULES: TimerRule[] = [
  ...range(undefined, 'both required'),
  { rule: 'notFuture', field: 'to', text: '`to` must be at most now: a backfill covers past fires only.' },
  { rule: 'note', fields: ['from', 'to'], text: '[from, to) holds at most TIMER_BACKFILL_MAX_FIRES (default 10,000) fires of the timer.' },
];
export const RECORDS_RULES: TimerRule[] = [
  ...range(undefined, 'when both are given'),
  { rule: 'fireOf', field: 'fireID', timer: 'timerID', text: '`fireID`, with `timerID`, must be a fire of that timer.' },
];
export const LOAD_RULES = (maxMs: number): TimerRule[] => range(maxMs, '`from` defaults to now, `to` to from + 60 s');
export const ACCOUNTING_RULES = (maxMs: number): TimerRule[] => range(maxMs, '`to` defaults to the end of the current window, `from` to 24 hours before `to`');
export const OVERVIEW_RULES = (maxMs: number, maxBuckets: number): TimerRule[] => [
  ...range(maxMs, '`to` defaults to now, `from` to 1 hour before `to`'),
  { rule: 'maxBuckets', field: 'bucketMs', from: 'from', to: 'to', max: maxBuckets, text: `\`bucketMs\` cuts [from, to) into at most ${maxBuckets} buckets.` },
];
export const MAINTENANCE_RULES: TimerRule[] = [
  { rule: 'exactlyOneGroup', groups: [['from', 'to'], ['cron', 'durationMs']], text: 'Give a fixed window (`from` and `to`) or a recurring one (`cron` and `durationMs`), not both.' },
  { rule: 'before', field: 'from', than: 'to', text: '`to` must be after `from`.' },
  { rule: 'future', field: 'to', text: '`to` must be in the future.' },
  { rule: 'meaning', field: 'cron', kind: 'cron', text: '`cron` must parse (5 or 6 fields, evaluated in UTC).' },
];
export const DEAD_LETTER_RULES: TimerRule[] = [{ rule: 'exactlyOne', fields: ['fireIds', 'timerId', 'all'], text: 'Give exactly one of `fireIds`, `timerId` and `all`.' }];
export const WEBHOOK_RULES: TimerRule[] = [
  { rule: 'meaning', field: 'failureWebhook.headers', kind: 'headerNames', text: 'Header names are RFC 7230 tokens, not X-Timer-* nor the framing headers (Host, Content-Length, Transfer-Encoding, ...).' },
];
