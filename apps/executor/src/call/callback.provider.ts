import { Injectable, OnApplicationShutdown, Provider } from '@nestjs/common';
import { CallbackClient } from '@timer/callback';
import { ExecutorConfig } from '../config/executor.env';

/** The callback client from the executor's settings (timeout, private addresses, pool size, what records keep of an answer). */
export const callbackClientProvider: Provider = {
  provide: CallbackClient,
  inject: [ExecutorConfig],
  useFactory: (c: ExecutorConfig) =>
    new CallbackClient({
      timeoutMs: c.callbackTimeoutMs,
      allowPrivate: c.allowPrivate,
      connectionsPerOrigin: c.callbackConnectionsPerOrigin,
      recordHeaders: c.recordHeaders,
      recordBodyBytes: c.recordBodyBytes,
    }),
};

/** Closes the callback client's connection pool once no handler runs any more. */
@Injectable()
export class CallbackClientCloser implements OnApplicationShutdown {
  private closed = false;

  constructor(private readonly client: CallbackClient) {}

  // Nest may run shutdown hooks twice in a hybrid app (the microservice's close, then the app's).
  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }
}
