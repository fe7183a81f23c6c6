import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { RoleConfig } from '@timer/platform';
import { PulsarAdmin, TopicStats } from '@timer/pulsar';
import { ExecutorBacklog } from './executor-backlog';

const NOW = 1_800_000_000_000;

function backlogWith(earliest: Record<string, number | undefined>) {
  const asked: string[] = [];
  const admin = {
    topicStats: async (topic: string, options?: { earliestTimeInBacklog?: boolean }) => {
      asked.push(`${topic}${options?.earliestTimeInBacklog ? '?earliest' : ''}`);
      const lane = topic.split('/').pop()!;
      const at = earliest[lane];
      const subscriptions = at === undefined ? {} : { [SUBSCRIPTIONS.executor]: { msgBacklog: 1, unackedMessages: 0, consumers: [], earliestMsgPublishTimeInBacklog: at } };
      return { msgInCounter: 0, msgOutCounter: 0, publishers: [], subscriptions } as TopicStats;
    },
  } as unknown as PulsarAdmin;
  const role = { pulsar: { TIMER_PULSAR_TENANT: 't', TIMER_PULSAR_NAMESPACE: 'ns' } } as unknown as RoleConfig;
  return { asked, backlog: new ExecutorBacklog(admin, role, { now: () => NOW }) };
}

describe('ExecutorBacklog', () => {
  it('is the age of the oldest unacknowledged message on either lane', async () => {
    const { asked, backlog } = backlogWith({ [TOPICS.tasks]: NOW - 2_000, [TOPICS.catchUp]: NOW - 45_000 });
    expect(await backlog.lagMs()).toBe(45_000);
    expect(asked.sort()).toEqual([`persistent://t/ns/${TOPICS.catchUp}?earliest`, `persistent://t/ns/${TOPICS.tasks}?earliest`]);
  });

  it('is 0 when nothing waits (-1 from the broker, or no executor subscription yet)', async () => {
    expect(await backlogWith({ [TOPICS.tasks]: -1 }).backlog.lagMs()).toBe(0);
  });
});
