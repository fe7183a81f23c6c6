import { Module } from '@nestjs/common';
import { FireOutcomeRepository } from '@timer/dal';
import { AdmitModule } from '../admit/admit.module';
import { IntakeModule } from '../intake/intake.module';
import { AttemptOutcomes } from './attempt-outcomes.service';
import { OutcomeRecorder } from './outcome-recorder.service';

/** The settle stage: an attempt's outcome decided and written in batches (the writes wait on the intake's lanes). */
@Module({
  imports: [IntakeModule, AdmitModule],
  providers: [FireOutcomeRepository, OutcomeRecorder, AttemptOutcomes],
  exports: [AttemptOutcomes],
})
export class SettleModule {}
