import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppRepository } from '@timer/dal';

/**
 * Seals, at boot, the signing secrets stored as plain text before TIMER_SECRETS_KEY was set, so that
 * setting the key and restarting the api leaves none in clear (docs/operations.md, "Signing secrets").
 * A failure is logged and retried at the next boot: the roles read plain text as well meanwhile.
 */
@Injectable()
export class SecretSealer implements OnApplicationBootstrap {
  private readonly logger = new Logger(SecretSealer.name);

  constructor(private readonly apps: AppRepository) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      const sealed = await this.apps.sealPlainSecrets();
      if (sealed > 0) this.logger.log(`sealed the signing secrets of ${sealed} app(s) under TIMER_SECRETS_KEY`);
    } catch (e) {
      this.logger.warn(`could not seal plain-text signing secrets: ${(e as Error).message}`);
    }
  }
}
