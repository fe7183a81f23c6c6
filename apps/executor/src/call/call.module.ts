import { Module } from '@nestjs/common';
import { FireWriter, TaskPublisher } from '@timer/fire';
import { AdmitModule } from '../admit/admit.module';
import { CallbackClientCloser, callbackClientProvider } from './callback.provider';
import { FireDelivery } from './fire-delivery.service';
import { MaintenanceGate } from './maintenance-gate.service';
import { MaintenanceWatch } from './maintenance-watch.service';
import { OverlapGuard } from './overlap-guard.service';
import { ResultWebhooks } from './result-webhooks.service';

/** The call stage: the wait for the fire's time, the checks before the call (definition, policies, origin), the callback and its answer's webhook. */
@Module({
  imports: [AdmitModule],
  providers: [callbackClientProvider, CallbackClientCloser, TaskPublisher, FireWriter, MaintenanceWatch, MaintenanceGate, OverlapGuard, ResultWebhooks, FireDelivery],
  exports: [FireDelivery],
})
export class CallModule {}
