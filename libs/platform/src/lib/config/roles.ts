/** The five roles, their default HTTP ports (DESIGN.md, public contracts) and what each depends on. */
export type RoleName = 'api' | 'migrator' | 'scheduler' | 'trigger' | 'executor';
export type Dependency = 'mysql' | 'redis' | 'pulsar';

export interface RoleDefinition {
  readonly name: RoleName;
  readonly defaultPort: number;
  readonly dependencies: readonly Dependency[];
}

export const ROLES: Readonly<Record<RoleName, RoleDefinition>> = {
  api: { name: 'api', defaultPort: 8092, dependencies: ['mysql', 'redis', 'pulsar'] },
  migrator: { name: 'migrator', defaultPort: 8093, dependencies: ['mysql', 'redis', 'pulsar'] },
  scheduler: { name: 'scheduler', defaultPort: 8094, dependencies: ['redis', 'pulsar'] },
  trigger: { name: 'trigger', defaultPort: 8095, dependencies: ['mysql', 'redis', 'pulsar'] },
  executor: { name: 'executor', defaultPort: 8096, dependencies: ['mysql', 'redis', 'pulsar'] },
};
