import 'reflect-metadata';
import { bootstrapRole } from '@timer/platform';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';

// Hybrid app: HTTP serves /health and /metrics; the work arrives over Pulsar.
bootstrapRole({
  role: 'scheduler',
  module: AppModule.register,
  microservice: (_app, config) => createPulsarServer(config),
}).catch((e: unknown) => {
  process.stderr.write(`timer-scheduler failed to start: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
