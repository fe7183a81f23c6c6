import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { createPulsarServer } from '@timer/pulsar-transport';
import { AppModule } from './app.module';
import { MIGRATOR_VARIABLES } from './config/migrator.env';

// Hybrid app: HTTP serves /health and /metrics; the migration loop runs on a timer (MigratorLoop);
// range messages of split windows arrive over Pulsar, one at a time per replica so they spread out;
// dead letters and missed fires arrive on the failure notifier's subscription.
bootstrapRole({
  role: 'migrator',
  module: (config) => AppModule.register(config),
  microservice: (_app, config) =>
    createPulsarServer(config, {
      [TOPICS.migrateRanges]: { subscription: SUBSCRIPTIONS.migrator, subscriptionType: 'Shared', concurrency: 1, receiverQueueSize: 1, negativeAckRedeliveryDelayMs: 5_000 },
      // Up to two POSTs' worth of dead letters in hand, so a batch of 100 can gather; a nack comes back after 30 s.
      [TOPICS.deadLetter]: { subscription: SUBSCRIPTIONS.failureNotifier, subscriptionType: 'Shared', concurrency: 200, receiverQueueSize: 200, negativeAckRedeliveryDelayMs: 30_000 },
      [TOPICS.missedFires]: { subscription: SUBSCRIPTIONS.failureNotifier, subscriptionType: 'Shared', concurrency: 200, receiverQueueSize: 200, negativeAckRedeliveryDelayMs: 30_000 },
    }),
  extraVariables: MIGRATOR_VARIABLES,
}).catch(exitOnBootFailure('migrator'));
