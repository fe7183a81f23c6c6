export { RoleRuntimeModule } from './lib/role-runtime.module';
