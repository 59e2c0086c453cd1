// Operating errors as both ends see them: the one error type (TallyError and
// its codes), its mapping to and from gRPC status, and the reasons and
// details a status carries (google.rpc.Status with an ErrorInfo).
export * from './errors.ts';
export * from './error-details.ts';
