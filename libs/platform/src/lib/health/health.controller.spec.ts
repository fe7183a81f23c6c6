import { Global, INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DependencyCheck } from './dependency-check';
import { HealthModule } from './health.module';
import { LifecycleService } from './lifecycle.service';

class FakeCheck implements DependencyCheck {
  readonly name = 'fake';
  failure: Error | undefined;
  hang = false;
  async ping(): Promise<void> {
    if (this.hang) await new Promise(() => undefined);
    if (this.failure) throw this.failure;
  }
}

const check = new FakeCheck();

// Infrastructure modules export their checks globally; the fake does the same.
@Global()
@Module({ providers: [{ provide: FakeCheck, useValue: check }], exports: [FakeCheck] })
class FakeInfraModule {}

describe('HealthController', () => {
  let app: INestApplication;

  beforeEach(async () => {
    check.failure = undefined;
    check.hang = false;
    const moduleRef = await Test.createTestingModule({ imports: [FakeInfraModule, HealthModule.register([FakeCheck])] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterEach(() => app.close());

  it('reports 200 with each dependency up', async () => {
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.details.fake.status).toBe('up');
  });

  it('reports 503 naming the dependency that fails, and why', async () => {
    check.failure = new Error('connection refused');
    const res = await request(app.getHttpServer()).get('/health').expect(503);
    expect(res.body.details.fake).toEqual({ status: 'down', message: 'connection refused' });
  });

  it('bounds a dependency that never answers', async () => {
    check.hang = true;
    const res = await request(app.getHttpServer()).get('/health').expect(503);
    expect(res.body.details.fake.message).toMatch(/no answer within/);
  });

  it('fails readiness while draining but keeps liveness', async () => {
    app.get(LifecycleService).startDraining();
    await request(app.getHttpServer()).get('/health').expect(503);
    await request(app.getHttpServer()).get('/health/live').expect(200, { status: 'ok' });
  });
});
