import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { AppModule } from './app.module';
import { ExecutorConfig, EXECUTOR_VARIABLES } from './config/executor.env';
import { createExecutorServer } from './executor.transport';

// Hybrid app: HTTP serves /health and /metrics; task messages arrive over Pulsar.
bootstrapRole({
  role: 'executor',
  module: (config) => AppModule.register(config),
  microservice: (app, config) => createExecutorServer(config, app.get(ExecutorConfig)),
  extraVariables: EXECUTOR_VARIABLES,
}).catch(exitOnBootFailure('executor'));
