import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DependencyCheck } from '@timer/platform';

@Injectable()
export class MysqlHealthCheck implements DependencyCheck {
  readonly name = 'mysql';

  constructor(private readonly dataSource: DataSource) {}

  async ping(): Promise<void> {
    if (!this.dataSource.isInitialized) throw new Error('not connected');
    await this.dataSource.query('SELECT 1');
  }
}
