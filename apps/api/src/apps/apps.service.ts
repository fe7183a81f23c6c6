import { Injectable } from '@nestjs/common';
import { AppRepository, DuplicateAppError } from '@timer/dal';
import { assertAdmin, assertAppAccess, Principal } from '../auth/principal';
import { conflict, notFound } from '../common/errors';
import { IssuedToken } from './dto/app.dto';

/**
 * App administration. Creating apps and issuing tokens need the admin token; revoking a token and
 * rotating the signing secret may also be done with a token of that app. Another app's token: 403.
 */
@Injectable()
export class AppsService {
  constructor(private readonly apps: AppRepository) {}

  async create(p: Principal, app: string): Promise<{ app: string }> {
    assertAdmin(p, 'creating an app');
    try {
      await this.apps.create(app);
    } catch (e) {
      if (e instanceof DuplicateAppError) throw conflict(`app ${app} already exists`);
      throw e;
    }
    return { app };
  }

  async issueToken(p: Principal, app: string, label?: string): Promise<IssuedToken> {
    assertAdmin(p, 'issuing a token');
    await this.mustExist(app);
    const { id, token } = await this.apps.addToken(app, label);
    return { id: Number(id), token };
  }

  async revokeToken(p: Principal, app: string, tokenId: string): Promise<void> {
    assertAppAccess(p, app);
    await this.mustExist(app);
    const revoked = await this.apps.revokeToken(app, tokenId);
    if (revoked === false) throw notFound(`app ${app} has no live token ${tokenId}`);
  }

  async rotateSecret(p: Principal, app: string): Promise<{ secret: string }> {
    assertAppAccess(p, app);
    await this.mustExist(app);
    return { secret: await this.apps.rotateSecret(app) };
  }

  private async mustExist(app: string): Promise<void> {
    if (!(await this.apps.find(app))) throw notFound(`app ${app} not found`);
  }
}
