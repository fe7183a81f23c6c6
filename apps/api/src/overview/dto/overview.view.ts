import { ApiProperty } from '@nestjs/swagger';
import { Envelope } from '../../common/envelope';

const P50 = 'Lateness (ms) of the delivered fires, nearest-rank 50th percentile; null without any.';
const P99 = 'Lateness (ms) of the delivered fires, nearest-rank 99th percentile; null without any.';

/** One bucket of run_at: its fires by outcome. `fires` = `delivered + failed + missed + open`. */
export class OverviewBucketView {
  @ApiProperty({ description: 'Bucket start, epoch ms.' })
  start!: number;
  @ApiProperty({ description: 'Bucket end, epoch ms, exclusive (the last bucket ends at `to`).' })
  end!: number;
  @ApiProperty({ description: 'Fires with run_at in the bucket, whatever became of them.' })
  fires!: number;
  @ApiProperty({ description: '`fires` per second of the bucket.' })
  firesPerSecond!: number;
  @ApiProperty()
  delivered!: number;
  @ApiProperty({ description: 'Gave up after the last attempt (dead-lettered).' })
  failed!: number;
  @ApiProperty({ description: 'Recorded missed with a reason.' })
  missed!: number;
  @ApiProperty({ description: 'Pending or in flight.' })
  open!: number;
  @ApiProperty({ type: Number, nullable: true, description: P50 })
  latenessP50Ms!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: P99 })
  latenessP99Ms!: number | null;
}

export class OverviewTotalsView {
  @ApiProperty()
  fires!: number;
  @ApiProperty({ description: '`fires` per second of [from, to).' })
  firesPerSecond!: number;
  @ApiProperty()
  delivered!: number;
  @ApiProperty()
  failed!: number;
  @ApiProperty()
  missed!: number;
  @ApiProperty()
  open!: number;
  @ApiProperty({ type: Number, nullable: true, description: P50 })
  latenessP50Ms!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: P99 })
  latenessP99Ms!: number | null;
  @ApiProperty({ description: 'Delivered fires the percentiles are taken over.' })
  latenessFires!: number;
  @ApiProperty({ description: 'True when [from, to) held more delivered fires than the api reads (200,000): the percentiles are those of the latest.' })
  latenessCapped!: boolean;
}

export class OverviewBacklogView {
  @ApiProperty({ description: 'Pending fires whose run_at has passed (not claimed by an executor yet), counted up to 100,000.' })
  pending!: number;
  @ApiProperty({ description: 'More than 100,000.' })
  capped!: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'run_at of the oldest of them (epoch ms); null when none.' })
  oldestRunAt!: number | null;
}

export class OverviewData {
  @ApiProperty({ type: String, nullable: true, description: 'The app, or null for all apps (the admin without `app`).' })
  app!: string | null;
  @ApiProperty({ description: 'Epoch ms (a multiple of bucketMs).' })
  from!: number;
  @ApiProperty({ description: 'Epoch ms, exclusive.' })
  to!: number;
  @ApiProperty()
  bucketMs!: number;
  @ApiProperty({ description: 'When the answer was read (epoch ms).' })
  now!: number;
  @ApiProperty({ type: OverviewTotalsView })
  totals!: OverviewTotalsView;
  @ApiProperty({ type: [OverviewBucketView], description: 'Every bucket of [from, to), ascending (empty ones with zeros).' })
  buckets!: OverviewBucketView[];
  @ApiProperty({ type: OverviewBacklogView })
  backlog!: OverviewBacklogView;
}

export class OverviewResponse extends Envelope {
  @ApiProperty({ type: OverviewData })
  data!: OverviewData;
}
