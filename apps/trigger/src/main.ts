import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';
import { TRIGGER_VARIABLES, TriggerConfig } from './config/trigger.env';
import { sliceConsumers } from './slices/slice-consumers';

// Hybrid app: HTTP serves /health and /metrics; slices arrive over Pulsar.
bootstrapRole({
  role: 'trigger',
  module: (config) => AppModule.register(config),
  microservice: (app, config) => createPulsarServer(config, sliceConsumers(app.get(TriggerConfig))),
  extraVariables: TRIGGER_VARIABLES,
}).catch(exitOnBootFailure('trigger'));
