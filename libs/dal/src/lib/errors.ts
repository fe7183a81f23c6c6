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

/** True for MySQL/MariaDB ER_DUP_ENTRY (1062), also when wrapped by TypeORM's QueryFailedError. */
export function isDuplicateKeyError(e: unknown): boolean {
  const err = e as { errno?: number; code?: string; driverError?: { errno?: number; code?: string } } | null;
  if (!err || typeof err !== 'object') return false;
  return err.errno === 1062 || err.code === 'ER_DUP_ENTRY' || err.driverError?.errno === 1062 || err.driverError?.code === 'ER_DUP_ENTRY';
}
