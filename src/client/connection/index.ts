// The client's connections: the set of routers with their channels and
// streams (router-set.ts), a call's loop of attempts (call-runner.ts), which
// router an attempt goes to next and after which failure it may be sent
// again (router-rotation.ts, resend-rule.ts), the addresses and channel
// options, per-call auth and the connection state shown to the caller. It
// makes no counter decisions: client.ts does.
export { CallAuth, type TokenProvider } from './call-auth.ts';
export { CallRunner, classOfWrite, type CallBounds } from './call-runner.ts';
export { ConnectionWatch, aggregateState, type ConnectionState } from './connection-state.ts';
export { resendAfter, type CallClass, type FailedAttempt, type Resend } from './resend-rule.ts';
export { parseRouterList, refuseTokenInTheClear, routerAddressesOf } from './router-addresses.ts';
export { RouterSet, aborted, adminMethods, counterMethods, throwIfAborted, type Router, type Rpc } from './router-set.ts';
