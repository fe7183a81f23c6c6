import { DEFAULT_URL, headerFlags, intFlag, parseCommandLine, UsageError } from './parse-args';

const parse = (line: string, env: Record<string, string> = {}) => parseCommandLine(line.split(' ').filter(Boolean), env);
const refused = (line: string) => {
  try {
    parse(line);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`${line} was accepted`);
};

describe('timerctl command line', () => {
  it('finds the command, its argument and the flags; flags win over the environment', () => {
    const inv = parse('timers get 42 --app billing -o json', { TIMER_URL: 'http://api:8092', TIMER_TOKEN: 't', TIMER_APP: 'other' });
    expect(inv).toMatchObject({ command: 'timers get', args: ['42'], app: 'billing', url: 'http://api:8092', token: 't', output: 'json' });
    expect(parse('records --timer 7 --pending')).toMatchObject({ command: 'records', args: [], url: DEFAULT_URL, output: 'table', app: undefined });
    expect(parse('timers create --header A:1 --header B:2').values.header).toEqual(['A:1', 'B:2']);
  });

  it('answers help for --help or no command', () => {
    expect(parse('').command).toBe('help');
    expect(parse('timers list --help').command).toBe('help');
  });

  it.each([
    ['timers', /^timers needs one of list, get, create/],
    ['timers lst', /^unknown command "timers lst": timers needs one of list/],
    ['frobnicate', /^unknown command "frobnicate"$/],
    ['timers get', /^timers get needs ID$/],
    ['timers get 1 2', /^timers get takes ID, got "1 2"$/],
    ['timers list --cron x', /^timers list does not take --cron$/],
    ['timers list --bogus', /Unknown option '--bogus'/],
    ['timers list -o yaml', /^--output must be table or json, not "yaml"$/],
  ])('refuses %s', (line, message) => expect(refused(line)).toMatch(message));

  it('reads whole-number flags and headers, naming the flag when they are not', () => {
    const { values } = parse('timers list --page 3 --page-size x');
    expect(intFlag(values, 'page')).toBe(3);
    expect(intFlag(values, 'name')).toBeUndefined();
    expect(() => intFlag(values, 'page-size')).toThrow('--page-size must be a whole number, not "x"');
    expect(headerFlags(['Content-Type: application/json', 'X-A: 1', 'X-A: 2'])).toEqual({ 'Content-Type': ['application/json'], 'X-A': ['1', '2'] });
    expect(headerFlags(undefined)).toBeUndefined();
    expect(() => headerFlags(['no colon'])).toThrow('--header must be "Name: value"');
  });
});
