export { CallbackClient } from './lib/callback-client';
export type { CallbackClientOptions, CallbackMethod, CallbackRequest, CallbackResponse, CallbackResult, FireIdentity } from './lib/callback-client';
export { guardedLookup, isPrivateAddress, PrivateAddressError } from './lib/address-policy';
export { signatureHeader, standardWebhookHeaders, verifySignature, WEBHOOK_SECRET_PREFIX, webhookKey } from './lib/signature';
export type { StandardWebhookHeaders } from './lib/signature';
export { parseRetryAfter } from './lib/retry-after';
export { fillCallback, fillTemplate, TEMPLATE_PLACEHOLDERS, templateProblem, usesPlaceholder } from './lib/template';
export type { TemplatedParts, TemplatePlaceholder, TemplateValues } from './lib/template';
