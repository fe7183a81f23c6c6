/** A live timer with this name already exists in the app. */
export class DuplicateTimerNameError extends Error {
  constructor(
    readonly app: string,
    readonly timerName: string,
  ) {
    super(`a timer named "${timerName}" already exists in app "${app}"`);
    this.name = 'DuplicateTimerNameError';
  }
}

/** The app already exists. */
export class DuplicateAppError extends Error {
  constructor(readonly app: string) {
    super(`app "${app}" already exists`);
    this.name = 'DuplicateAppError';
  }
}

/** True when `e` is the server's error `errno` / `code`, also when wrapped by TypeORM's QueryFailedError. */
function isServerError(e: unknown, errno: number, code: string): boolean {
  const err = e as { errno?: number; code?: string; driverError?: { errno?: number; code?: string } } | null;
  if (!err || typeof err !== 'object') return false;
  return err.errno === errno || err.code === code || err.driverError?.errno === errno || err.driverError?.code === code;
}

/** True for MySQL/MariaDB ER_DUP_ENTRY (1062). */
export function isDuplicateKeyError(e: unknown): boolean {
  return isServerError(e, 1062, 'ER_DUP_ENTRY');
}

/** True for ER_LOCK_DEADLOCK (1213): InnoDB chose this transaction as the victim and rolled it back whole. */
export function isDeadlockError(e: unknown): boolean {
  return isServerError(e, 1213, 'ER_LOCK_DEADLOCK');
}
