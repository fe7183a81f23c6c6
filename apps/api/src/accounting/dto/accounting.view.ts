import { ApiProperty } from '@nestjs/swagger';
import { Envelope } from '../../common/envelope';

/** One window of an app's fires. `expected` = `delivered + failed + missed + open`. */
export class WindowAccountView {
  @ApiProperty({ description: 'Window start, epoch ms (UTC-aligned, TIMER_WINDOW_MINUTES long).' })
  windowStart!: number;
  @ApiProperty({ description: 'Window end, epoch ms (exclusive).' })
  windowEnd!: number;
  @ApiProperty({ description: 'Fires that exist for the window (created by enable, run now or the migrator).' })
  expected!: number;
  @ApiProperty()
  delivered!: number;
  @ApiProperty({ description: 'Gave up after the last attempt (dead-lettered).' })
  failed!: number;
  @ApiProperty({ description: 'Recorded missed with a reason (late beyond the misfire policy, timer disabled or deleted).' })
  missed!: number;
  @ApiProperty({ description: 'delivered + failed + missed.' })
  settled!: number;
  @ApiProperty({ description: 'Pending or in flight.' })
  open!: number;
  @ApiProperty({ description: 'The window has ended: in a healthy service its open count drops to 0 within the reconciler\'s grace.' })
  finished!: boolean;
}

export class AccountingData {
  @ApiProperty()
  app!: string;
  @ApiProperty({ description: 'Window length (ms).' })
  windowMs!: number;
  @ApiProperty()
  from!: number;
  @ApiProperty()
  to!: number;
  @ApiProperty({ type: [WindowAccountView], description: 'Windows with at least one fire, ascending.' })
  windows!: WindowAccountView[];
  @ApiProperty({ description: 'Open fires of finished windows: 0 when nothing was dropped or left behind.' })
  unsettledFinished!: number;
}

export class AccountingResponse extends Envelope {
  @ApiProperty({ type: AccountingData })
  data!: AccountingData;
}
