export { CallbackClient } from './lib/callback-client';
export type { CallbackClientOptions, CallbackMethod, CallbackRequest, CallbackResult, FireIdentity } from './lib/callback-client';
export { guardedLookup, isPrivateAddress, PrivateAddressError } from './lib/address-policy';
export { signatureHeader, verifySignature } from './lib/signature';
