import { Inject, Injectable, Logger } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { MESSAGE_PROPERTIES, TaskMessage, TOPICS } from '@timer/contracts';
import { taskBatchRecord, taskRecord } from '@timer/fire';
import { CLOCK, NowClock } from '@timer/platform';
import { ClientPulsar, PulsarRecord } from '@timer/pulsar-transport';
import { RescueMarks } from '@timer/redis';

const RECHECK_PROPERTY = MESSAGE_PROPERTIES.recheck;

/** Hand-backs coming back within the same span of this length go out in one message (the broker's delayed delivery ticks every second anyway). */
export const HAND_BACK_BUCKET_MS = 1_000;
/** Most fires of one hand-back message (the trigger's TIMER_TRIGGER_BATCH_MAX default). */
export const HAND_BACK_BATCH_MAX = 100;
/**
 * A stored hand-back's fires are marked as waiting in the broker until this long after their return
 * (`RescueMarks.handedBack`; the reconciler does not rescue them meanwhile): time for the broker's
 * delayed delivery and for the executor to take the returned message, claim or hand it back again
 * (which renews the mark). A fire whose message is lost is rescued once its mark lapses.
 */
export const HAND_BACK_MARK_SLACK_MS = 30_000;

export type HandBackMarks = Pick<RescueMarks, 'handedBack'>;

interface HandBack {
  message: TaskMessage;
  at: number;
  deferrals: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Everything the executor sends back to the broker, used by the orchestrator alone (FireService); every
 * method resolves once the broker has persisted the message.
 */
@Injectable()
export class FirePublisher {
  private readonly logger = new Logger(FirePublisher.name);
  private handBacks: HandBack[] = [];

  constructor(
    private readonly client: ClientPulsar,
    @Inject(RescueMarks) private readonly marks: HandBackMarks,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  /** The next attempt, on the retries topic, delivered at `at`. */
  async retry(message: TaskMessage, at: number): Promise<void> {
    await this.emit(TOPICS.retries, message, {}, at);
  }

  /**
   * The same message again at `at` (on the retries topic, which the executor also consumes): an
   * early message, or a recheck of a fire another executor holds.
   */
  async defer(message: TaskMessage, at: number, recheck: boolean): Promise<void> {
    await this.emit(TOPICS.retries, message, recheck ? { [RECHECK_PROPERTY]: '1' } : {}, at);
  }

  /**
   * A fire its app's share could not take now (fair delivery), back at `at` (or up to
   * {@link HAND_BACK_BUCKET_MS} later), counting the hand-backs. The hand-backs of one event-loop turn
   * go out together, one message per count and span of return (`{tasks: [...]}`), so a publish per fire
   * does not hold up the other apps' claims and calls (docs/benchmarks.md, "Measurements behind the code").
   */
  handBack(message: TaskMessage, at: number, deferrals: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.handBacks.push({ message, at, deferrals, resolve, reject }) === 1) setImmediate(() => this.sendHandBacks());
    });
  }

  /** A fire that failed for good, with why in the properties. */
  async deadLetter(message: TaskMessage, properties: Record<string, string>): Promise<void> {
    await this.emit(TOPICS.deadLetter, message, properties);
  }

  /** A missed fire its app's failure webhook is told of (`MISSED_REASONS_NOTIFIED`), with the record's reason. */
  async missed(message: TaskMessage, reason: string): Promise<void> {
    await this.emit(TOPICS.missedFires, message, { [MESSAGE_PROPERTIES.reason]: reason });
  }

  private sendHandBacks(): void {
    const groups = new Map<string, HandBack[]>();
    for (const h of this.handBacks.splice(0)) {
      const key = `${h.deferrals}:${Math.floor(h.at / HAND_BACK_BUCKET_MS)}`;
      const group = groups.get(key);
      if (group) group.push(h);
      else groups.set(key, [h]);
    }
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += HAND_BACK_BATCH_MAX) {
        const part = group.slice(i, i + HAND_BACK_BATCH_MAX);
        this.emitHandBack(part).then(
          () => {
            part.forEach((h) => h.resolve());
            this.markHandedBack(part);
          },
          (e: unknown) => part.forEach((h) => h.reject(e)),
        );
      }
    }
  }

  /**
   * Tells the reconciler these pending fires wait on the retries topic, not lost (after the broker
   * stored them, off the callers' path). Best effort: without the mark a fire may be re-sent once,
   * which its claim turns into a duplicate message or a hand-back.
   */
  private markHandedBack(part: HandBack[]): void {
    const at = Math.max(...part.map((h) => h.at));
    this.marks.handedBack(part.map((h) => h.message.fireId), at - this.clock.now() + HAND_BACK_MARK_SLACK_MS).catch((e: Error) => {
      this.logger.debug(`marking ${part.length} handed-back fire(s) failed (the reconciler may re-send them): ${e.message}`);
    });
  }

  /** One message for fires of the same hand-back count, back when the latest of them asked. */
  private emitHandBack(part: HandBack[]): Promise<void> {
    const deferrals = { [MESSAGE_PROPERTIES.deferrals]: String(part[0].deferrals) };
    const at = Math.max(...part.map((h) => h.at));
    if (part.length === 1) return this.emit(TOPICS.retries, part[0].message, deferrals, at);
    return this.send(TOPICS.retries, taskBatchRecord(part.map((h) => h.message), deferrals, at));
  }

  /** `taskRecord` adds the fire id and the trace context to the properties. */
  private emit(topic: string, message: TaskMessage, properties: Record<string, string>, deliverAt?: number): Promise<void> {
    return this.send(topic, taskRecord(message, properties, deliverAt));
  }

  private async send(topic: string, record: PulsarRecord): Promise<void> {
    await lastValueFrom(this.client.emit(topic, record), { defaultValue: undefined });
  }
}
