import { Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { TaskMessage, taskTopicOf, TOPICS } from '@timer/contracts';
import { CLOCK, FireSpan, NO_TRACING, NowClock, Tracing } from '@timer/platform';
import { ClientPulsar } from '@timer/pulsar-transport';
import { lastValueFrom } from 'rxjs';
import { taskBatchRecord, taskRecord } from './task-messages';

/**
 * Publishes task messages keyed by timer id, with the fire id as a property: the trigger for the
 * fires it walks, and every role that creates a fire already due (run now, enable, catch-up) for
 * those. A fire due now goes on `timer-tasks`; one already more than CATCH_UP_AFTER_MS late on the
 * catch-up lane `timer-tasks-catchup`. Resolves once the broker persisted the message.
 *
 * With tracing on, each fire published starts its trace here (`timer.fire.publish`, ended once the
 * broker persisted it; a fire that carries a trace already continues it): the span's `traceparent` goes
 * in the fire's payload and, on a one-fire message, in the message's `traceparent` property.
 */
@Injectable()
export class TaskPublisher implements OnApplicationBootstrap {
  private readonly logger = new Logger(TaskPublisher.name);

  constructor(
    private readonly client: ClientPulsar,
    @Inject(CLOCK) private readonly clock: NowClock,
    @Optional() private readonly tracing: Tracing = NO_TRACING,
  ) {}

  /**
   * Both lanes' producers are opened at start-up (after the topology is provisioned), not by their first
   * fire, which would wait for the open, slowest while the broker takes a backlog
   * (docs/benchmarks.md, "Measurements behind the code"). Not awaited: a slow broker must not hold the
   * role's start.
   */
  onApplicationBootstrap(): void {
    this.client.prepare([TOPICS.tasks, TOPICS.catchUp]).catch((e: unknown) => {
      this.logger.warn(`opening the task producers at start-up failed (the first message opens them): ${(e as Error).message}`);
    });
  }

  async publish(task: TaskMessage, properties: Record<string, string> = {}): Promise<void> {
    if (this.tracing.enabled) return this.traced([task], (traced) => this.emitOne(traced[0], properties));
    await this.emitOne(task, properties);
  }

  private async emitOne(task: TaskMessage, properties: Record<string, string>): Promise<void> {
    await lastValueFrom(this.client.emit(taskTopicOf(task.runAt, this.clock.now()), taskRecord(task, properties)), { defaultValue: undefined });
  }

  /** Publishes `tasks` each in a `timer.fire.publish` span (a new trace unless it has one), ended once `publish` settled. */
  private async traced(tasks: readonly TaskMessage[], publish: (traced: TaskMessage[]) => Promise<void>): Promise<void> {
    const spans: FireSpan[] = new Array(tasks.length);
    const traced = tasks.map((t, i) => {
      const span = this.tracing.start('timer.fire.publish', t.traceparent, 'producer', { 'timer.fire_id': t.fireId, 'timer.timer_id': t.timerId, 'timer.attempt': t.attempt });
      spans[i] = span;
      return { ...t, traceparent: span.traceparent };
    });
    try {
      await publish(traced);
      for (const s of spans) s.end();
    } catch (e) {
      for (const s of spans) s.end((e as Error).message);
      throw e;
    }
  }

  /**
   * Publishes fires as one task message per lane (`{tasks: [...]}`; one fire: the plain form): each fire
   * goes on the lane its own lateness picks, so a fire due now is never sent down the catch-up lane with
   * late ones it was found with (a step or a catch-up of mixed lateness). Resolves once the broker persisted
   * them; callers chunk at MAX_TASKS_PER_MESSAGE.
   */
  async publishBatch(tasks: readonly TaskMessage[]): Promise<void> {
    if (this.tracing.enabled) return this.traced(tasks, (traced) => this.emitLanes(traced));
    await this.emitLanes(tasks);
  }

  private async emitLanes(tasks: readonly TaskMessage[]): Promise<void> {
    const now = this.clock.now();
    const lanes = new Map<string, TaskMessage[]>();
    for (const t of tasks) {
      const topic = taskTopicOf(t.runAt, now);
      const lane = lanes.get(topic);
      if (lane) lane.push(t);
      else lanes.set(topic, [t]);
    }
    await Promise.all([...lanes].map(([topic, fires]) => (fires.length === 1 ? this.emitOne(fires[0], {}) : this.emitBatch(topic, fires))));
  }

  private async emitBatch(topic: string, tasks: TaskMessage[]): Promise<void> {
    await lastValueFrom(this.client.emit(topic, taskBatchRecord(tasks)), { defaultValue: undefined });
  }
}
