import { jsonTextProblem } from './json-guard';

describe('jsonTextProblem', () => {
  it.each([
    ['{"app":"a","app":"b"}', 'app: duplicate key "app" (each key may be given once)'],
    ['{"app":"a","\\u0061pp":"b"}', 'app: duplicate key "app" (each key may be given once)'],
    ['{"n":{"header":{"X-A":["1"],"X-A":["2"]}}}', 'n.header.X-A: duplicate key "X-A" (each key may be given once)'],
    ['[{"a":1},{"b":1,"b":2}]', '[1].b: duplicate key "b" (each key may be given once)'],
    ['{"__proto__":{"x":1}}', '__proto__: the key "__proto__" is not allowed (nor __proto__, constructor or prototype anywhere)'],
    ['{"notifyHTTPParam":{"header":{"\\u005f_proto__":["x"]}}}', 'notifyHTTPParam.header.__proto__: the key "__proto__" is not allowed (nor __proto__, constructor or prototype anywhere)'],
    ['{"a":[{"constructor":1}]}', 'a[0].constructor: the key "constructor" is not allowed (nor __proto__, constructor or prototype anywhere)'],
    ['{"prototype":1}', 'prototype: the key "prototype" is not allowed (nor __proto__, constructor or prototype anywhere)'],
    ['{"name":"x\\ud800"}', 'name holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which cannot be stored'],
    ['{"list":["ok","\\udc00y"]}', 'list[1] holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which cannot be stored'],
    ['"\\ud800"', 'the body holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which cannot be stored'],
  ])('refuses %s', (text, problem) => expect(jsonTextProblem(text)).toBe(problem));

  const ids = new Set(['id', 'timerIds']);
  it.each([
    ['{"id":1e3}', 'id must be written in digits (a JSON integer or a digit string), not 1e3'],
    ['{"app":"a","id":1.0}', 'id must be written in digits (a JSON integer or a digit string), not 1.0'],
    ['{"id":1E+3}', 'id must be written in digits (a JSON integer or a digit string), not 1E+3'],
    ['{"timerIds":[1,-2.5e1]}', 'timerIds[1] must be written in digits (a JSON integer or a digit string), not -2.5e1'],
  ])('refuses the id number %s', (text, problem) => expect(jsonTextProblem(text, ids)).toBe(problem));

  it.each(['{"id":1000,"maxFires":1e3,"n":{"x":1.5}}', '{"id":"1e3"}', '{"id":-1}', '{"timerIds":[1,22]}', '[1e3]', '{"a":[1e3],"ids":"id"}'])('leaves the numbers of %s to the DTO', (text) =>
    expect(jsonTextProblem(text, ids)).toBeUndefined(),
  );

  it.each([
    '{"app":"a","name":"b","n":{"app":"a"}}',
    '[{"a":1},{"a":1}]',
    '{"a":"\\"}{,\\\\","b":"\\ud83d\\ude00 😀"}',
    '{"proto":1,"Constructor":2,"__proto":3}',
    '{"a":',
    '',
  ])('leaves %j alone', (text) => expect(jsonTextProblem(text)).toBeUndefined());
});
