import { Module } from '@nestjs/common';
import { FireOutcomeRepository } from '@timer/dal';
import { CallStarts } from './call-starts.service';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorLiveness } from './executor-liveness.service';
import { FireAdmission } from './fire-admission.service';
import { FirstClaims } from './first-claims.service';

/** The admit stage: the definition read, the early and pause deferrals, the claim (a first attempt's in Redis: FirstClaims) and the takeover of a dead holder's fire. */
@Module({
  providers: [ExecutorLiveness, CallStarts, ClaimBatcher, FireOutcomeRepository, FirstClaims, FireAdmission],
  exports: [FireAdmission, CallStarts, FirstClaims],
})
export class AdmitModule {}
