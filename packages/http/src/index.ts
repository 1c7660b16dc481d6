// `@cairn/http`: Cairn workflows in serverless functions (docs/serverless.md).
export { createHttpHandler } from './create-http-handler.js';
export type { FetchHandler } from './create-http-handler.js';
export type { HttpHandlerOptions } from './http-handler-options.js';
export { toNodeListener } from './node-listener.js';
export { signPush, verifyPush, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './push-signature.js';
export type { SignatureRefusal } from './push-signature.js';
export type { NextPush, PushAnswer, PushUnit } from './push-unit.js';
export { createDispatcher } from './dispatcher.js';
export type { DispatchEvent, Dispatcher, DispatcherOptions } from './dispatcher.js';
