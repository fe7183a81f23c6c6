import { readFileSync } from 'fs';
import { join } from 'path';

/**
 * One Lua script of `lua/<name>-<keys>.lua`, named like BullMQ's commands: the number in the file name
 * is how many keys it takes (at most; `extendLockToken` takes its guard key only when given one).
 */
export interface LuaScript {
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

/** Where the scripts are: beside this module, in the sources and in `dist` (the build copies them). */
export const LUA_DIR = join(__dirname, 'lua');

/** Reads `lua/<file>.lua`; a missing file fails at start-up, naming it, rather than at its first use. */
function load(file: string): LuaScript {
  const match = /^(.+)-(\d+)$/.exec(file);
  if (!match) throw new Error(`Lua script file name ${file} must end with -<number of keys>`);
  const path = join(LUA_DIR, `${file}.lua`);
  let lua: string;
  try {
    lua = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`Lua script ${path} cannot be read (a build must copy libs/redis/src/lib/lua): ${(e as Error).message}`);
  }
  return { name: match[1], numberOfKeys: Number(match[2]), lua };
}

/** Every Lua script the service runs, by name. */
export const LUA_SCRIPTS = {
  deleteIfEqual: load('deleteIfEqual-1'),
  extendLock: load('extendLock-1'),
  extendLockToken: load('extendLockToken-2'),
  enterInFlight: load('enterInFlight-2'),
  holdInFlight: load('holdInFlight-1'),
  syncPausedApps: load('syncPausedApps-1'),
  sliceBuckets: load('sliceBuckets-1'),
  removeTimer: load('removeTimer-1'),
  markCalls: load('markCalls-1'),
  takeOverCall: load('takeOverCall-1'),
  incrWindow: load('incrWindow-1'),
  peekWindow: load('peekWindow-1'),
  bloomAdd: load('bloomAdd-1'),
  bloomCheck: load('bloomCheck-1'),
  takeOverClaim: load('takeOverClaim-1'),
} as const satisfies Record<string, LuaScript>;
