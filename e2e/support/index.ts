export { ApiCallError, ApiClient } from './api-client';
export type { NewTimer, NotifyHttpParam, TaskRecord } from './api-client';
export { Receiver } from './receiver';
export type { Delivery, ReceiverOptions, Reply, Responder } from './receiver';
export { infra, procCpuSeconds, ROLES, shortId, Stack } from './stack';
export type { Role, StackOptions } from './stack';
export { accountFires, describeAccount, percentile, percentiles, periodicFireIds } from './stats';
export type { FireAccount, Percentiles } from './stats';
export { nextSecond, pollUntil, sleep, sleepUntil, started } from './time';
