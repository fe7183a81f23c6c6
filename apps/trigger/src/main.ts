import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';

// Hybrid app: HTTP serves /health and /metrics; the work arrives over Pulsar.
bootstrapRole({
  role: 'trigger',
  module: AppModule.register,
  microservice: (_app, config) => createPulsarServer(config),
}).catch(exitOnBootFailure('trigger'));
