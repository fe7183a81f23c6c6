import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';
import { MIGRATOR_VARIABLES } from './config/migrator.env';

// Hybrid app: HTTP serves /health and /metrics; the migration loop runs on a timer (MigratorLoop).
bootstrapRole({
  role: 'migrator',
  module: (config) => AppModule.register(config),
  microservice: (_app, config) => createPulsarServer(config),
  extraVariables: MIGRATOR_VARIABLES,
}).catch(exitOnBootFailure('migrator'));
