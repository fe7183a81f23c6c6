import { Module } from '@nestjs/common';
import { AppShareGate } from './app-share.gate';
import { FireLanes } from './fire-lanes';

/** The intake stage: a fire's lane slot and its app's share of the handlers. */
@Module({ providers: [FireLanes, AppShareGate], exports: [FireLanes, AppShareGate] })
export class IntakeModule {}
