// What every gRPC caller of Tally, the client library and the servers alike,
// starts a call with: channel options, the proto-loader options the
// generated types assume, the clocks a deadline is measured on, and the
// caller-stack-free call start.
export * from './client-channel.ts';
export * from './caller-stack.ts';
export * from './clock.ts';
export * from './proto-options.ts';
