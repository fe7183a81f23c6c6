export { dataSourceOptions, MIGRATIONS } from './lib/data-source.options';
export { DalModule } from './lib/dal.module';
export { MysqlHealthCheck } from './lib/mysql-health.check';
export { runMigrations } from './lib/migrate';
