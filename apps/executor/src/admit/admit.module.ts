import { Module } from '@nestjs/common';
import { CallStarts } from './call-starts.service';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorLiveness } from './executor-liveness.service';
import { FireAdmission } from './fire-admission.service';

/** The admit stage: the definition read, the early and pause deferrals, the claim and the takeover of a dead holder's fire. */
@Module({
  providers: [ExecutorLiveness, CallStarts, ClaimBatcher, FireAdmission],
  exports: [FireAdmission, CallStarts],
})
export class AdmitModule {}
