import { LogEnv } from './env.config';
import { ConfigError, loadConfig } from './load-config';

export interface LogSettings {
  level: LogEnv['TIMER_LOG_LEVEL'];
  format: LogEnv['TIMER_LOG_FORMAT'];
}

/**
 * `TIMER_LOG_LEVEL` and `TIMER_LOG_FORMAT` alone, read before anything else so that a bad value of
 * any other variable is reported in the chosen format. A bad log variable falls back to the defaults
 * here; the full validation then reports it.
 */
export function bootLogSettings(env: NodeJS.ProcessEnv = process.env): LogSettings {
  try {
    const c = loadConfig(LogEnv, env);
    return { level: c.TIMER_LOG_LEVEL, format: c.TIMER_LOG_FORMAT };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const defaults = new LogEnv();
    const format = env.TIMER_LOG_FORMAT === 'json' ? 'json' : defaults.TIMER_LOG_FORMAT;
    return { level: defaults.TIMER_LOG_LEVEL, format };
  }
}
