import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RoleConfig, RoleDependency } from '@timer/platform';
import { DalRepositoriesModule } from './dal-repositories.module';
import { dataSourceOptions } from './data-source.options';
import { MysqlHealthCheck } from './mysql-health.check';
import { SecretCipher } from './secret-cipher';

/** The role's MySQL connection pool (TypeORM over mysql2), from `TIMER_MYSQL_*`, and the repositories over it. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [RoleConfig],
      useFactory: (config: RoleConfig) => ({
        ...dataSourceOptions(config.mysql.TIMER_MYSQL_URL, config.mysql.TIMER_MYSQL_POOL_SIZE, {
          tlsCaFile: config.mysql.TIMER_MYSQL_TLS_CA_FILE,
          slowQueryMs: config.mysql.TIMER_MYSQL_SLOW_QUERY_MS,
        }),
        // Keep retrying at boot: MySQL may come up after the role (compose, Kubernetes).
        retryAttempts: 30,
        retryDelay: 2_000,
      }),
    }),
    DalRepositoriesModule,
  ],
  providers: [
    MysqlHealthCheck,
    {
      provide: SecretCipher,
      inject: [RoleConfig],
      useFactory: (config: RoleConfig) => {
        const key = config.mysql.TIMER_SECRETS_KEY;
        return key ? new SecretCipher(Buffer.from(key, 'base64')) : SecretCipher.PLAIN;
      },
    },
  ],
  exports: [MysqlHealthCheck, SecretCipher, DalRepositoriesModule],
})
export class DalModule {}

/** What a role that depends on MySQL is given (`RoleRuntimeModule.forRole`). */
export const MYSQL_DEPENDENCY: RoleDependency = { module: DalModule, check: MysqlHealthCheck };
