/**
 * Per-message options for {@link ClientPulsar.emit}: wrap the data in a {@link PulsarRecord}
 * (build one with {@link PulsarRecordBuilder}) to set the key, properties or a delayed delivery.
 */
export interface PulsarRecordOptions {
  /** Partition / Key_Shared routing key. */
  key?: string;
  /** Message properties (string values only, as Pulsar stores them). */
  properties?: Record<string, string>;
  /** Absolute delivery time (epoch ms or Date); honoured by Shared / Key_Shared subscriptions only. */
  deliverAt?: number | Date;
  /** Relative delivery delay (ms); honoured by Shared / Key_Shared subscriptions only. */
  deliverAfterMs?: number;
}

/** @publicApi */
export class PulsarRecord<TData = unknown> {
  constructor(
    readonly data: TData,
    public options?: PulsarRecordOptions,
  ) {}
}

/** @publicApi */
export class PulsarRecordBuilder<TData = unknown> {
  private options: PulsarRecordOptions = {};

  constructor(private data?: TData) {}

  setData(data: TData): this {
    this.data = data;
    return this;
  }

  /** Merges the given options over the ones set so far. */
  setOptions(options: PulsarRecordOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  setKey(key: string): this {
    this.options.key = key;
    return this;
  }

  /** Replaces all properties. */
  setProperties(properties: Record<string, string>): this {
    this.options.properties = { ...properties };
    return this;
  }

  /** Adds (or overwrites) one property. */
  setProperty(name: string, value: string): this {
    this.options.properties = { ...(this.options.properties ?? {}), [name]: value };
    return this;
  }

  /** Deliver at this time (epoch ms or Date). Clears a delay set with {@link setDeliverAfter}. */
  setDeliverAt(at: number | Date): this {
    this.options.deliverAt = at;
    delete this.options.deliverAfterMs;
    return this;
  }

  /** Deliver after this delay (ms). Clears a time set with {@link setDeliverAt}. */
  setDeliverAfter(ms: number): this {
    this.options.deliverAfterMs = ms;
    delete this.options.deliverAt;
    return this;
  }

  build(): PulsarRecord<TData> {
    if (this.data === undefined) {
      throw new Error('PulsarRecordBuilder: data is required (call setData or pass it to the constructor)');
    }
    return new PulsarRecord(this.data, { ...this.options });
  }
}
