import { Inject, Injectable } from '@nestjs/common';
import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { CLOCK, NowClock, RoleConfig } from '@timer/platform';
import { PulsarAdmin, topicName } from '@timer/pulsar';

/** The lanes whose messages are delivered at once (the retries topic holds messages due later). */
const LANES = [TOPICS.tasks, TOPICS.catchUp] as const;

/**
 * How far behind the executors are: the age of the oldest task message on the lanes that no executor
 * has acknowledged yet (the broker's `earliestMsgPublishTimeInBacklog`), 0 when none waits. A fire
 * that is pending while this is large is most likely waiting in that backlog, not lost.
 */
@Injectable()
export class ExecutorBacklog {
  constructor(
    private readonly admin: PulsarAdmin,
    private readonly role: RoleConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  /** Throws when the broker does not answer. */
  async lagMs(): Promise<number> {
    const { TIMER_PULSAR_TENANT: tenant, TIMER_PULSAR_NAMESPACE: namespace } = this.role.pulsar;
    const stats = await Promise.all(LANES.map((lane) => this.admin.topicStats(topicName(tenant, namespace, lane), { earliestTimeInBacklog: true })));
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of stats) {
      const at = s.subscriptions[SUBSCRIPTIONS.executor]?.earliestMsgPublishTimeInBacklog ?? -1;
      if (at > 0) oldest = Math.min(oldest, at);
    }
    return Number.isFinite(oldest) ? Math.max(0, this.clock.now() - oldest) : 0;
  }
}
