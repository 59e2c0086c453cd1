// The router's HTTP port: counter.v1's services over the Connect protocol
// (JSON or binary, for curl and any HTTP client) and gRPC-Web (browsers).
// Every call runs the handler the gRPC port runs (api/handler.ts) on a
// request decoded by the gRPC port's own codec: the message arrives as a
// @bufbuild/protobuf message, goes back to protobuf bytes and through the
// gRPC definition's deserializer, so validation, limits and errors are the
// gRPC port's to the byte. Credentials and the caps on calls in flight are
// checked on the headers, before the body is read (G10).
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fromBinary, toBinary, type DescMessage, type DescMethod, type DescService, type JsonValue } from '@bufbuild/protobuf';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { Code, ConnectError, cors, createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { status, type ServiceDefinition } from '@grpc/grpc-js';
import { ErrorCode, TallyError, deadlineIn, messageBytesMax, toStatusParts, decodeStatusDetails } from '../../wire/index.ts';
import {
  busyRefusal,
  malformedRefusalOf,
  type InFlightCount,
  type InFlightLimits,
  type Logger,
  type Refusal,
  type TlsMaterial,
} from '../../common/index.ts';
import { AdminService, CounterService } from '../../generated/es/counter_pb.ts';
import { refusalOfAuthorization, type CallState, type Tokens, type UnaryHandlers } from '../api/index.ts';
import type { HttpMetrics } from './http-metrics.ts';

/** What the port serves and what guards it; the services' handlers and definitions are the gRPC port's. */
export interface ConnectPortOptions {
  host: string;
  /** 0: a port the kernel picks. */
  port: number;
  /** HTTPS (HTTP/2 and HTTP/1.1) with the router's certificate; undefined: plaintext HTTP/1.1. */
  tls: TlsMaterial | undefined;
  requireClientCert: boolean;
  /** Origins a browser page may call from (CORS); '*' for any. Empty: no cross-origin calls. */
  corsOrigins: readonly string[];
  services: {
    counter: { handlers: UnaryHandlers; definition: ServiceDefinition };
    admin: { handlers: UnaryHandlers; definition: ServiceDefinition };
  };
  tokens: Tokens;
  inFlight: InFlightLimits & { count: InFlightCount };
  /** Ceiling on any call's deadline, as on the gRPC port. */
  deadlineMaxMs: number;
  /** The largest request of a method, in protobuf bytes (the gRPC port's bound). */
  requestBytesMaxOf(method: string): number;
  metrics: HttpMetrics;
  logger: Logger;
}

export interface ConnectPort {
  port: number;
  close(timeoutMs: number): Promise<void>;
}

/** How a call arrived: the protocol label of tally_http_calls_total. */
type Protocol = 'connect_json' | 'connect_proto' | 'grpc_web' | 'other';

/** One call's bookkeeping, from its headers to its response's end. */
interface CallRecord {
  path: string;
  protocol: Protocol;
  /** The status the caller was answered with, when a handler or a guard of ours decided it. */
  code: number | undefined;
  /** Counted in the in-flight caps (and released when the response closes). */
  large: boolean | undefined;
  /** A binary body the gRPC port's codec refused (binaryPrecheck): the call answers with this. */
  malformed?: TallyError;
}

const callRecordKey = createContextKey<CallRecord | undefined>(undefined, { description: 'tally call record' });

/**
 * A JSON body may be several times its protobuf bytes (base64, names,
 * escapes): a body past this many times a method's bound is refused on its
 * Content-Length before it is read; the exact bound is checked on the bytes.
 */
const jsonBytesPerProtoByte = 8;

function protocolOf(contentType: string | undefined, httpMethod: string | undefined): Protocol {
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('application/grpc-web')) return 'grpc_web';
  if (type.startsWith('application/json') || httpMethod === 'GET') return 'connect_json';
  if (type.startsWith('application/proto')) return 'connect_proto';
  return 'other';
}

/** A ConnectError with the code (gRPC and Connect number them alike), message and google.rpc details of a status. */
function connectErrorOf(thrown: unknown, changesNothing = false): ConnectError {
  if (thrown instanceof ConnectError) return thrown;
  const { code, details, statusDetails } = toStatusParts(thrown, changesNothing);
  const error = new ConnectError(details, code as Code);
  // Readable in a JSON error too ("debug"); the bytes are what a client decodes.
  const decoded = decodeStatusDetails(statusDetails);
  for (const any of anysOf(statusDetails)) {
    const debug: JsonValue | undefined =
      any.type === 'google.rpc.ErrorInfo'
        ? { reason: decoded?.reason ?? '', domain: decoded?.domain ?? '', metadata: decoded?.metadata ?? {} }
        : any.type === 'google.rpc.RetryInfo' && decoded?.retryAfterMs !== undefined
          ? { retryDelay: `${decoded.retryAfterMs / 1000}s` }
          : undefined;
    error.details.push(debug === undefined ? any : { ...any, debug });
  }
  return error;
}

/** The details (google.protobuf.Any) of a serialized google.rpc.Status, as Connect sends them: type name and bytes. */
function anysOf(statusBytes: Uint8Array): { type: string; value: Uint8Array }[] {
  const anys: { type: string; value: Uint8Array }[] = [];
  const reader = new BinaryReader(statusBytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field !== 3) {
      reader.skip(wireType);
      continue;
    }
    const any = new BinaryReader(reader.bytes());
    let type = '';
    let value: Uint8Array = new Uint8Array(0);
    while (any.pos < any.len) {
      const [anyField, anyWireType] = any.tag();
      if (anyField === 1) type = any.string();
      else if (anyField === 2) value = any.bytes();
      else any.skip(anyWireType);
    }
    anys.push({ type: type.slice(type.lastIndexOf('/') + 1), value });
  }
  return anys;
}

function refusalError(refusal: Refusal): ConnectError {
  return connectErrorOf(
    new TallyError(codeNameOf(refusal.code), refusal.details, refusal.code, {
      ...(refusal.retryAfterMs === undefined ? {} : { retryAfterMs: refusal.retryAfterMs }),
    }),
  );
}

function codeNameOf(grpcCode: number): ErrorCode {
  switch (grpcCode) {
    case Code.Unauthenticated:
      return ErrorCode.unauthenticated;
    case Code.PermissionDenied:
      return ErrorCode.permissionDenied;
    case Code.ResourceExhausted:
      return ErrorCode.resourceExhausted;
    default:
      return ErrorCode.internal;
  }
}

/** The status of a call no handler or guard of ours answered (connect-node refused it: a body it could not parse, say). */
function codeOfResponse(record: CallRecord, response: http.ServerResponse | http2.Http2ServerResponse): number {
  const grpcStatus = response.getHeader('grpc-status');
  if (grpcStatus !== undefined) return Number(grpcStatus);
  if (record.protocol === 'grpc_web') return Code.Unknown;
  // Connect's mapping of codes to HTTP statuses, read back.
  const byHttpStatus: Record<number, number> = {
    200: 0,
    400: Code.InvalidArgument,
    401: Code.Unauthenticated,
    403: Code.PermissionDenied,
    404: Code.Unimplemented,
    408: Code.DeadlineExceeded,
    409: Code.Aborted,
    413: Code.ResourceExhausted,
    // A content type or HTTP version the method cannot take: the caller's mistake, not the server's.
    415: Code.InvalidArgument,
    429: Code.ResourceExhausted,
    499: Code.Canceled,
    501: Code.Unimplemented,
    503: Code.Unavailable,
    504: Code.DeadlineExceeded,
    505: Code.Unimplemented,
  };
  return byHttpStatus[response.statusCode] ?? Code.Internal;
}

/**
 * A handler's view of a Connect call: cancelled when the caller went away,
 * its own deadline passed, or the server's ceiling did.
 */
function callStateOf(context: HandlerContext, deadlineMaxMs: number, ceiling: { passed: boolean }): CallState {
  const timeoutMs = Math.min(context.timeoutMs() ?? Infinity, deadlineMaxMs);
  // Taken once, at the call's start: the handlers' gRPC shape wants a wall-clock deadline.
  const deadline = deadlineIn(timeoutMs);
  return {
    get cancelled() {
      return context.signal.aborted || ceiling.passed;
    },
    getDeadline: () => deadline,
  };
}

/**
 * The handler's answer, or the end of the call first: the caller's deadline
 * or its going away (connect-node aborts the signal but waits for the
 * handler), or the server's ceiling. As on the gRPC port, the answer does not
 * wait for a handler still working on a call that ended; the handler sees
 * it cancelled and stops what checks for it.
 */
function untilEnded<T>(context: HandlerContext, deadlineMaxMs: number, ceiling: { passed: boolean }, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<never>((_, reject) => {
    onAbort = () => {
      const reason: unknown = context.signal.reason;
      reject(reason instanceof ConnectError ? reason : new ConnectError('the caller went away', Code.Canceled));
    };
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
    if ((context.timeoutMs() ?? Infinity) > deadlineMaxMs) {
      timer = setTimeout(() => {
        ceiling.passed = true;
        reject(new TallyError(ErrorCode.deadlineExceeded, `the server ends any call after ${deadlineMaxMs} ms; give a shorter deadline`));
      }, deadlineMaxMs);
      timer.unref();
    }
  });
  return Promise.race([work, ended]).finally(() => {
    clearTimeout(timer);
    if (onAbort !== undefined) context.signal.removeEventListener('abort', onAbort);
  });
}

/** Runs one method's gRPC handler on a Connect message: protobuf bytes through the gRPC definition's codec both ways. */
function bridge(
  method: DescMethod,
  handlers: UnaryHandlers,
  definition: ServiceDefinition,
  options: Pick<ConnectPortOptions, 'deadlineMaxMs' | 'requestBytesMaxOf'>,
): (message: unknown, context: HandlerContext) => Promise<unknown> {
  const handler = handlers[method.name];
  const codec = definition[method.name];
  if (handler === undefined || codec === undefined) throw new Error(`connect port: no handler for ${method.name}`);
  const bytesMax = options.requestBytesMaxOf(method.name);
  return async (message, context) => {
    const record = context.values.get(callRecordKey);
    try {
      if (record?.malformed !== undefined) throw record.malformed;
      const bytes = Buffer.from(toBinary(method.input as DescMessage, message as never));
      if (bytes.length > bytesMax)
        throw new TallyError(
          ErrorCode.resourceExhausted,
          `${method.name} request of ${bytes.length} bytes; the limit for ${method.name} is ${bytesMax} bytes`,
        );
      const request = codec.requestDeserialize(bytes);
      const refusal = malformedRefusalOf(request);
      if (refusal !== undefined) throw refusal;
      const ceiling = { passed: false };
      const response = await untilEnded(
        context,
        options.deadlineMaxMs,
        ceiling,
        Promise.resolve().then(() => handler.handle(request, callStateOf(context, options.deadlineMaxMs, ceiling))),
      );
      const output = fromBinary(method.output, codec.responseSerialize(response));
      if (record !== undefined) record.code = 0;
      return output;
    } catch (error) {
      const connectError = connectErrorOf(error, handler.changesNothing);
      if (record !== undefined) record.code = connectError.code;
      throw connectError;
    }
  };
}

function implementationOf(
  service: DescService,
  handlers: UnaryHandlers,
  definition: ServiceDefinition,
  options: ConnectPortOptions,
): Record<string, unknown> {
  const implementation: Record<string, unknown> = {};
  for (const method of service.methods) {
    if (method.methodKind === 'unary' && handlers[method.name] !== undefined) {
      implementation[method.localName] = bridge(method, handlers, definition, options);
    } else {
      // Streams need HTTP/2 end to end and have their own flow control: the gRPC port serves them.
      const words = method.methodKind === 'unary' ? `${method.name} is not served` : `${method.name} is served on the gRPC port only`;
      implementation[method.localName] = () => {
        throw new ConnectError(words, Code.Unimplemented);
      };
    }
  }
  return implementation;
}

/** An unary gRPC-Web body: one uncompressed data frame (flags 0, then a 4-byte length). */
const grpcWebFrameHeaderBytes = 5;

/**
 * The largest body read before the request gate counts the call in flight:
 * what a burst of such calls holds is bounded by this, not by the large
 * methods' megabytes. Larger binary bodies go to connect-node as they are.
 */
const precheckBytesMax = 64 * 1024;

/**
 * connect-node answers a binary body that is not a message INTERNAL ("parse
 * binary: ..."), where the gRPC port answers INVALID_ARGUMENT in its codec's
 * words. So a small binary body (Connect's application/proto, or gRPC-Web's
 * one uncompressed frame) is read here first, once the call's headers passed
 * the checks the request gate makes (credentials, the caps, its length), and
 * decoded by the gRPC port's codec. A refused body reaches connect-node as an
 * empty message, and the handler's bridge answers with the codec's refusal,
 * in whichever protocol the call came.
 */
async function binaryPrecheck(
  request: http.IncomingMessage | http2.Http2ServerRequest,
  record: CallRecord,
  codec: ServiceDefinition[string],
  lengthBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    total += chunk.length;
    // More than promised: connect-node's read refuses it; nothing to decode here.
    if (total > lengthBytes) break;
  }
  const body = Buffer.concat(chunks);
  if (total !== lengthBytes) return body;
  let message = body;
  if (record.protocol === 'grpc_web') {
    if (body.length < grpcWebFrameHeaderBytes || body[0] !== 0 || body.readUInt32BE(1) !== body.length - grpcWebFrameHeaderBytes)
      return body;
    message = body.subarray(grpcWebFrameHeaderBytes);
  }
  const refusal = malformedRefusalOf(codec.requestDeserialize(message));
  if (refusal === undefined) return body;
  record.malformed = refusal;
  return record.protocol === 'grpc_web' ? Buffer.alloc(grpcWebFrameHeaderBytes) : Buffer.alloc(0);
}

/** The request with its body replaced by `body` (already read from it): connect-node reads the body by iterating the request. */
function replaying<Request extends http.IncomingMessage | http2.Http2ServerRequest>(request: Request, body: Buffer): Request {
  const headers = { ...request.headers, 'content-length': String(body.length) };
  return new Proxy(request, {
    get(target, property) {
      if (property === Symbol.asyncIterator)
        return async function* () {
          if (body.length > 0) yield body;
        };
      if (property === 'headers') return headers;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** CORS for the configured origins: a preflight is answered here; other requests get the headers and go on. */
function applyCors(
  request: http.IncomingMessage | http2.Http2ServerRequest,
  response: http.ServerResponse | http2.Http2ServerResponse,
  origins: readonly string[],
): 'answered' | 'continue' {
  const origin = request.headers.origin;
  const allowed = typeof origin === 'string' && (origins.includes('*') || origins.includes(origin));
  if (allowed) {
    response.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
    response.setHeader('vary', 'origin');
    response.setHeader('access-control-expose-headers', cors.exposedHeaders.join(', '));
  }
  if (request.method !== 'OPTIONS') return 'continue';
  if (allowed) {
    response.setHeader('access-control-allow-methods', cors.allowedMethods.join(', '));
    response.setHeader('access-control-allow-headers', [...cors.allowedHeaders, 'authorization'].join(', '));
    response.setHeader('access-control-max-age', '7200');
    response.writeHead(204);
  } else {
    response.writeHead(403, { 'content-type': 'text/plain' });
  }
  response.end();
  return 'answered';
}

/**
 * The check every call passes before its handler, with its headers only:
 * the bearer token, the caps on calls in flight, and the declared body size.
 * A call let through counts in flight until its response closes.
 */
function requestGateOf(options: ConnectPortOptions): (context: HandlerContext) => void {
  const { tokens, inFlight, metrics } = options;
  return (context) => {
    const record = context.values.get(callRecordKey);
    const path = `/${context.service.typeName}/${context.method.name}`;
    const refusal = refusalOfAuthorization(tokens, path, context.requestHeader.get('authorization') ?? undefined);
    if (refusal !== undefined) {
      metrics.callsRefused.inc({ reason: refusal.code === status.PERMISSION_DENIED ? 'permission_denied' : 'unauthenticated' });
      if (record !== undefined) record.code = refusal.code;
      throw refusalError(refusal);
    }
    const large = inFlight.isLarge(path);
    const busy = busyRefusal(inFlight, inFlight.count, large);
    if (busy !== undefined) {
      inFlight.onRefused?.(path);
      if (record !== undefined) record.code = busy.code;
      throw refusalError(busy);
    }
    const length = Number(context.requestHeader.get('content-length') ?? 0);
    const bytesMax = options.requestBytesMaxOf(context.method.name);
    if (length > bytesMax * jsonBytesPerProtoByte + 1024) {
      const error = connectErrorOf(
        new TallyError(
          ErrorCode.resourceExhausted,
          `${context.method.name} request of ${length} bytes; the limit for ${context.method.name} is ${bytesMax} bytes`,
        ),
      );
      if (record !== undefined) record.code = error.code;
      throw error;
    }
    inFlight.count.calls++;
    if (large) inFlight.count.largeCalls++;
    inFlight.onInFlight?.(inFlight.count.calls);
    if (record !== undefined) record.large = large;
  };
}

/** The unary methods' codecs by path (for the binary precheck), and every path the two services serve (metric labels). */
function pathsOf(services: ConnectPortOptions['services']): {
  codecByPath: Map<string, ServiceDefinition[string]>;
  knownPaths: Set<string>;
} {
  const codecByPath = new Map<string, ServiceDefinition[string]>();
  for (const [service, { definition }] of [
    [CounterService, services.counter],
    [AdminService, services.admin],
  ] as const)
    for (const method of service.methods) {
      const codec = definition[method.name];
      if (method.methodKind === 'unary' && codec !== undefined) codecByPath.set(`/${service.typeName}/${method.name}`, codec);
    }
  const knownPaths = new Set(
    [CounterService, AdminService].flatMap((service) => service.methods.map((method) => `/${service.typeName}/${method.name}`)),
  );
  return { codecByPath, knownPaths };
}

/** The HTTP/1.1 (or, with TLS, HTTP/2 with HTTP/1.1 allowed) server, listening; its HTTP/2 sessions tracked for close. */
async function listen(
  options: ConnectPortOptions,
  listener: (request: http.IncomingMessage | http2.Http2ServerRequest, response: http.ServerResponse | http2.Http2ServerResponse) => void,
): Promise<{ server: http.Server | http2.Http2SecureServer; sessions: Set<http2.ServerHttp2Session> }> {
  const server: http.Server | http2.Http2SecureServer =
    options.tls === undefined
      ? http.createServer(listener)
      : http2.createSecureServer(
          {
            key: options.tls.key,
            cert: options.tls.cert,
            ca: options.tls.ca,
            allowHTTP1: true,
            requestCert: options.requireClientCert,
            rejectUnauthorized: options.requireClientCert,
          },
          listener,
        );
  // HTTP/2 sessions outlive their calls: closed (GOAWAY, calls in flight finish) when the port closes.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, sessions };
}

export async function startConnectPort(options: ConnectPortOptions): Promise<ConnectPort> {
  const { tokens, inFlight, metrics } = options;
  const adapter = connectNodeAdapter({
    routes(router) {
      const { counter, admin } = options.services;
      router.service(CounterService, implementationOf(CounterService, counter.handlers, counter.definition, options) as never);
      router.service(AdminService, implementationOf(AdminService, admin.handlers, admin.definition, options) as never);
    },
    connect: true,
    grpcWeb: true,
    grpc: false,
    // The body as the gRPC port bounds a message; each method's own bound is checked on its bytes.
    readMaxBytes: messageBytesMax,
    writeMaxBytes: messageBytesMax,
    // Unknown fields in JSON are refused (a misspelled field must not pass as absent).
    // Every field written, defaults too: a shell reading .shard or .total finds 0, not nothing.
    jsonOptions: { ignoreUnknownFields: false, alwaysEmitImplicit: true },
    contextValues: (request) => createContextValues().set(callRecordKey, records.get(request as object)),
    requestGate: requestGateOf(options),
  });

  const records = new WeakMap<object, CallRecord>();
  const { codecByPath, knownPaths } = pathsOf(options.services);
  const finish = (record: CallRecord, response: http.ServerResponse | http2.Http2ServerResponse): void => {
    if (record.large !== undefined) {
      inFlight.count.calls--;
      if (record.large) inFlight.count.largeCalls--;
      inFlight.onInFlight?.(inFlight.count.calls);
    }
    // A response cut before its end: the caller went away.
    const code = record.code ?? (response.writableFinished ? codeOfResponse(record, response) : Code.Canceled);
    // Only the services' own paths: a caller choosing paths must not choose label values.
    if (knownPaths.has(record.path)) metrics.rpcStatus(record.path, code);
    metrics.httpCalls.inc({ protocol: record.protocol });
  };
  const listener = (
    request: http.IncomingMessage | http2.Http2ServerRequest,
    response: http.ServerResponse | http2.Http2ServerResponse,
  ): void => {
    if (applyCors(request, response, options.corsOrigins) === 'answered') return;
    const path = (request.url ?? '/').split('?')[0]!;
    const record: CallRecord = {
      path,
      protocol: protocolOf(request.headers['content-type'], request.method),
      code: undefined,
      large: undefined,
    };
    records.set(request, record);
    response.once('close', () => finish(record, response));
    const codec = codecByPath.get(path);
    const lengthBytes = Number(request.headers['content-length'] ?? NaN);
    const precheck =
      codec !== undefined &&
      request.method === 'POST' &&
      ((record.protocol === 'connect_proto' && request.headers['content-encoding'] === undefined) ||
        (record.protocol === 'grpc_web' && !/json/i.test(String(request.headers['content-type'])))) &&
      Number.isSafeInteger(lengthBytes) &&
      lengthBytes <=
        Math.min(precheckBytesMax, options.requestBytesMaxOf(path.slice(path.lastIndexOf('/') + 1)) + grpcWebFrameHeaderBytes) &&
      refusalOfAuthorization(tokens, path, request.headers.authorization) === undefined &&
      busyRefusal(inFlight, inFlight.count, inFlight.isLarge(path)) === undefined;
    if (!precheck) {
      adapter(request as never, response as never);
      return;
    }
    binaryPrecheck(request, record, codec, lengthBytes).then(
      (body) => {
        const replayed = replaying(request, body);
        records.set(replayed, record);
        adapter(replayed as never, response as never);
      },
      () => response.destroy(),
    );
  };

  const { server, sessions } = await listen(options, listener);
  const port = (server.address() as AddressInfo).port;
  options.logger.info('http port', { host: options.host, port, tls: options.tls !== undefined, corsOrigins: options.corsOrigins });
  return {
    port,
    close: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections();
          resolve();
        }, timeoutMs);
        timer.unref();
        if ('closeIdleConnections' in server) server.closeIdleConnections();
        for (const session of sessions) session.close();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
