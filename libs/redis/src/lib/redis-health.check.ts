import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import type { DependencyCheck } from '@timer/platform';
import { REDIS } from './redis.tokens';

@Injectable()
export class RedisHealthCheck implements DependencyCheck {
  readonly name = 'redis';

  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async ping(): Promise<void> {
    const answer = await this.redis.ping();
    if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
  }
}
