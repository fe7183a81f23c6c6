import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';
import { SCHEDULER_VARIABLES } from './config/scheduler.env';

// Hybrid app: HTTP serves /health and /metrics; the scheduling loop runs on a timer (SchedulerLoop)
// and publishes slice offers through the role's ClientPulsar.
bootstrapRole({
  role: 'scheduler',
  module: (config) => AppModule.register(config),
  microservice: (_app, config) => createPulsarServer(config),
  extraVariables: SCHEDULER_VARIABLES,
}).catch(exitOnBootFailure('scheduler'));
