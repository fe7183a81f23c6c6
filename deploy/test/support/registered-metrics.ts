import { execFileSync } from 'child_process';
import { join } from 'path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..', '..');

/**
 * True when a role registers a metric of this exact name (its name appears quoted in apps/ or libs/):
 * the dashboard and the alert rules must only query metrics that exist, so a rename cannot silently
 * blank a panel or mute an alert.
 */
export function registeredInCode(name: string): boolean {
  try {
    execFileSync('grep', ['-rqF', `'${name}'`, 'apps', 'libs', '--include=*.ts'], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}
