import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'crypto';
import { ApiConfig } from '../config/api.env';
import { unauthorized } from '../common/errors';
import { APP_TOKENS, AppTokenLookup } from './auth.tokens';
import { Principal } from './principal';

const BEARER = /^Bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i;

/** Resolves `Authorization: Bearer <token>` to a principal, or throws the 401 envelope. */
@Injectable()
export class TokenAuthService implements OnModuleInit {
  private readonly logger = new Logger(TokenAuthService.name);
  private readonly adminDigest?: Buffer;

  constructor(
    private readonly config: ApiConfig,
    @Inject(APP_TOKENS) private readonly tokens: AppTokenLookup,
  ) {
    // Compare digests, not tokens: equal length for timingSafeEqual whatever the caller sends.
    if (config.adminToken) this.adminDigest = createHash('sha256').update(config.adminToken).digest();
  }

  onModuleInit(): void {
    if (this.config.authDisabled) this.logger.warn('TIMER_AUTH_DISABLED=true: the API accepts requests without a token, for every app');
    else if (!this.config.adminToken) this.logger.warn('TIMER_ADMIN_TOKEN is not set: only app tokens are accepted, and no app can be created');
  }

  async authenticate(authorization: string | string[] | undefined): Promise<Principal> {
    if (this.config.authDisabled) return { kind: 'open' };
    if (typeof authorization !== 'string' || authorization.length === 0) throw unauthorized('missing Authorization: Bearer <token>');
    const m = BEARER.exec(authorization);
    if (!m) throw unauthorized('Authorization must be "Bearer <token>"');
    const token = m[1];
    if (this.adminDigest && timingSafeEqual(createHash('sha256').update(token).digest(), this.adminDigest)) return { kind: 'admin' };
    const app = await this.tokens.appForToken(token);
    if (!app) throw unauthorized('invalid or revoked token');
    return { kind: 'app', app };
  }
}
