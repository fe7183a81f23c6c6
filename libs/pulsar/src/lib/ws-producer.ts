import type { ConnectionSettings } from './connection-settings';
import { PulsarClosedError, PulsarSendError, PulsarTimeoutError } from './errors';
import { PendingSends } from './pending-sends';
import type { MessageId, OutgoingMessage, Producer, ProducerOptions, TopicName } from './pulsar-client.interface';
import { ReconnectingSession } from './reconnecting-session';
import { canonicalTopicName, topicUrlPath } from './topic-name';
import { decodeProducerAck, encodeSendFrame } from './ws-frames';

const DEFAULT_MAX_PENDING = 1000;

/**
 * A producer over the Pulsar WebSocket API: `/ws/v2/producer/...` sessions, one or several.
 *
 * Every send carries a unique `context` the proxy echoes in its answer, so answers may come back
 * in any order. At most `maxPendingMessages` sends are written and unanswered at a time; further
 * sends queue locally (FIFO) rather than fail. When a session drops, its unanswered sends go back
 * to the head of the queue and are written again once a session is open (at-least-once: a message
 * whose answer was lost is published twice). One sweep timer fails sends older than the send
 * timeout.
 */
export class WsProducer implements Producer {
  readonly topic: TopicName;
  private readonly sessions: ReconnectingSession[];
  private readonly pending: PendingSends;
  private readonly sendTimeoutMs: number;
  private seq = 0;
  private closing = false;
  private closePromise: Promise<void> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: ConnectionSettings,
    options: ProducerOptions,
    private readonly onClosed: (producer: WsProducer) => void = () => undefined,
  ) {
    this.topic = canonicalTopicName(options.topic);
    const connections = Math.floor(options.connections ?? 1);
    const maxPending = Math.floor(options.maxPendingMessages ?? DEFAULT_MAX_PENDING);
    if (!(connections >= 1)) throw new RangeError(`connections must be >= 1, got ${options.connections}`);
    if (!(maxPending >= 1)) throw new RangeError(`maxPendingMessages must be >= 1, got ${options.maxPendingMessages}`);
    this.sendTimeoutMs = options.sendTimeoutMs ?? settings.sendTimeoutMs;
    this.pending = new PendingSends(connections, maxPending);

    const params = new URLSearchParams();
    // The proxy's own producer must not time out or overflow before we do.
    params.set('sendTimeoutMillis', String(this.sendTimeoutMs));
    params.set('maxPendingMessages', String(Math.max(maxPending, 1)));
    if (options.batchingEnabled) {
      params.set('batchingEnabled', 'true');
      params.set('batchingMaxPublishDelay', String(options.batchingMaxPublishDelayMs ?? 1));
      params.set('batchingMaxMessages', '1000');
    }
    this.sessions = Array.from({ length: connections }, (_, slot) => {
      const query = new URLSearchParams(params);
      if (options.producerName) {
        // The broker allows one producer per name and topic.
        query.set('producerName', connections === 1 ? options.producerName : `${options.producerName}-${slot}`);
      }
      const url = `${settings.wsBase}/ws/v2/producer/${topicUrlPath(this.topic)}?${query.toString()}`;
      const label = `producer ${this.topic}${connections > 1 ? ` #${slot}` : ''}`;
      return new ReconnectingSession(url, label, settings, {
        onOpen: () => this.pump(),
        onMessage: (text) => this.onAnswer(slot, text),
        onDown: () => {
          const resend = this.pending.requeue(slot);
          if (resend > 0) settings.logger.warn(`${label}: ${resend} unacknowledged sends will be sent again`);
          this.pump();
        },
      });
    });
  }

  /** Opens every session; rejects (and closes) if any cannot be opened. */
  async start(): Promise<void> {
    try {
      await Promise.all(this.sessions.map((s) => s.start()));
    } catch (error) {
      await Promise.all(this.sessions.map((s) => s.close()));
      throw error;
    }
    if (this.sendTimeoutMs > 0) {
      const every = Math.min(1000, Math.max(20, Math.floor(this.sendTimeoutMs / 10)));
      this.sweepTimer = setInterval(() => this.sweep(), every);
      this.sweepTimer.unref();
    }
  }

  /**
   * Resolves with the broker's message id once the broker has persisted the message; rejects with
   * PulsarSendError (broker refused), PulsarTimeoutError (no answer within the send timeout, counted
   * from this call) or PulsarClosedError (send after close).
   */
  send(message: OutgoingMessage): Promise<MessageId> {
    if (this.closing) return Promise.reject(new PulsarClosedError(`producer ${this.topic} is closed`));
    let frame: string;
    const seq = ++this.seq;
    const context = seq.toString(36);
    try {
      frame = encodeSendFrame(message, context);
    } catch (error) {
      return Promise.reject(error);
    }
    const deadline = this.sendTimeoutMs > 0 ? Date.now() + this.sendTimeoutMs : Infinity;
    return new Promise<MessageId>((resolve, reject) => {
      this.pending.enqueue({ seq, context, frame, deadline, resolve, reject });
      this.pump();
    });
  }

  /** Resolves when every send issued so far has settled (acked, failed or timed out). */
  flush(): Promise<void> {
    return this.pending.flush(this.seq);
  }

  /**
   * Refuses new sends, waits for the ones in flight to settle, then closes the sessions. While the
   * broker is unreachable that wait lasts up to the send timeout (forever with sendTimeoutMs 0).
   */
  close(): Promise<void> {
    this.closePromise ??= (async () => {
      this.closing = true;
      await this.flush();
      if (this.sweepTimer) clearInterval(this.sweepTimer);
      await Promise.all(this.sessions.map((s) => s.close()));
      this.onClosed(this);
    })();
    return this.closePromise;
  }

  /** Sends waiting or in flight (for metrics and tests). */
  get outstanding(): number {
    return this.pending.outstanding;
  }

  /** Writes waiting sends while the window has room, each to the open session with the fewest in flight. */
  private pump(): void {
    for (;;) {
      const slot = this.pickSession();
      if (slot < 0) return;
      const send = this.pending.dispatch(slot);
      if (send === undefined) return;
      this.sessions[slot].send(send.frame);
    }
  }

  private pickSession(): number {
    if (this.sessions.length === 1) return this.sessions[0].isOpen ? 0 : -1;
    let best = -1;
    let bestLoad = Infinity;
    for (let slot = 0; slot < this.sessions.length; slot++) {
      if (!this.sessions[slot].isOpen) continue;
      const load = this.pending.inFlightOn(slot);
      if (load < bestLoad) {
        best = slot;
        bestLoad = load;
      }
    }
    return best;
  }

  private onAnswer(slot: number, text: string): void {
    let ack;
    try {
      ack = decodeProducerAck(text);
    } catch {
      this.settings.logger.error(`producer ${this.topic}: unreadable frame from broker: ${text.slice(0, 200)}`);
      return;
    }
    if (ack === undefined) return;
    if (ack.context === undefined) {
      // Only frames the proxy could not parse come back without context; ours are always valid JSON.
      this.settings.logger.error(`producer ${this.topic}: broker error without context: ${ack.result} ${ack.errorMsg ?? ''}`);
      return;
    }
    const send = this.pending.complete(slot, ack.context);
    if (send === undefined) return; // answered after it timed out
    if (ack.result === 'ok') send.resolve(ack.messageId ?? '');
    else send.reject(new PulsarSendError(ack.result, ack.errorMsg));
    this.pending.settled(send);
    this.pump();
  }

  private sweep(): void {
    const expired = this.pending.expire(Date.now());
    if (expired.length === 0) return;
    const error = new PulsarTimeoutError(
      `producer ${this.topic}: no broker acknowledgement within ${this.sendTimeoutMs} ms (the message may still have been persisted)`,
    );
    for (const send of expired) {
      send.reject(error);
      this.pending.settled(send);
    }
    this.pump();
  }
}
