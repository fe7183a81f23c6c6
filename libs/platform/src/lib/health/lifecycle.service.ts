import { Injectable } from '@nestjs/common';

/** Process lifecycle as seen by probes: once draining, readiness fails so traffic moves elsewhere. */
@Injectable()
export class LifecycleService {
  private drainingSince: number | undefined;

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }
}
