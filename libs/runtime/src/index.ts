export { RoleRuntimeModule } from './lib/role-runtime.module';
export { FireIndexer, FireRows, FireWriter } from './lib/fire-writer';
