import { run } from './cli/run';

// The environment is read here only: TIMER_URL, TIMER_TOKEN and TIMER_APP (flags win).
run(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: { TIMER_URL: process.env.TIMER_URL, TIMER_TOKEN: process.env.TIMER_TOKEN, TIMER_APP: process.env.TIMER_APP },
}).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`timerctl: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 3;
  },
);
