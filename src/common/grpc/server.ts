// gRPC server plumbing shared by the router and the node: message limits,
// health and reflection, binding, and async handlers whose thrown errors
// become the right status.
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  type handleUnaryCall,
  type ChannelOptions,
  type ServiceDefinition,
  type ServerInterceptor,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { messageBytesMax, toServiceError, TallyError, ErrorCode } from '../../wire/index.ts';
import { sessionMemoryMaxMiB, streamsPerConnectionMax } from '../limits.ts';
import { stopWithParent } from '../config.ts';
import type { Logger } from '../logger.ts';

export const serverOptions: ChannelOptions = {
  'grpc.max_concurrent_streams': streamsPerConnectionMax,
  'grpc-node.max_session_memory': sessionMemoryMaxMiB,
  'grpc.max_receive_message_length': messageBytesMax,
  'grpc.max_send_message_length': messageBytesMax,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
};

export interface TallyServer {
  server: Server;
  health: HealthImplementation;
}

/**
 * A server with health (NOT_SERVING until the caller says ready) and
 * reflection. Interceptors run on a call's metadata before its message is
 * read or decoded: the place for checks that must not cost a decode.
 */
export function createTallyServer(
  packageDefinitions: PackageDefinition[],
  serviceNames: string[],
  interceptors: ServerInterceptor[] = [],
): TallyServer {
  const server = new Server({ ...serverOptions, interceptors });
  const initial: Record<string, 'NOT_SERVING'> = { '': 'NOT_SERVING' };
  for (const name of serviceNames) initial[name] = 'NOT_SERVING';
  const health = new HealthImplementation(initial);
  health.addToServer(server);
  addReflection(server, packageDefinitions);
  return { server, health };
}

/**
 * Server reflection (grpcurl, Postman) over the merged package definitions,
 * its index built on the first reflection call: building it decodes every
 * file descriptor, a fifth of a process's start-up CPU that almost no
 * process ever uses. The services are registered now, from a reflection
 * service over no definitions, so a server offers reflection from its start.
 */
function addReflection(server: Pick<Server, 'addService'>, packageDefinitions: PackageDefinition[]): void {
  let handlersOf: Map<string, UntypedServiceImplementation> | undefined;
  const handlers = (): Map<string, UntypedServiceImplementation> => {
    if (handlersOf !== undefined) return handlersOf;
    const built = new Map<string, UntypedServiceImplementation>();
    // One reflection service may be registered per server: merge the definitions.
    new ReflectionService(Object.assign({}, ...packageDefinitions)).addToServer({
      addService: (service, implementation) => built.set(serviceKeyOf(service), implementation),
    });
    handlersOf = built;
    return built;
  };
  new ReflectionService({}).addToServer({
    addService: (service, implementation) => {
      const key = serviceKeyOf(service);
      const lazy: UntypedServiceImplementation = {};
      for (const method of Object.keys(implementation)) {
        lazy[method] = (call: unknown, callback?: unknown) => {
          const real = handlers().get(key)?.[method] as (call: unknown, callback?: unknown) => void;
          real(call, callback);
        };
      }
      server.addService(service, lazy);
    },
  });
}

/** A service's identity: the path of its first method (`/package.Service/`). */
function serviceKeyOf(service: ServiceDefinition): string {
  const first = Object.values(service)[0];
  return first === undefined ? '' : first.path.slice(0, first.path.lastIndexOf('/'));
}

export function setServing(tallyServer: TallyServer, serviceNames: string[], serving: boolean): void {
  const value = serving ? 'SERVING' : 'NOT_SERVING';
  tallyServer.health.setStatus('', value);
  for (const name of serviceNames) tallyServer.health.setStatus(name, value);
}

export function bindServer(
  server: Server,
  address: string,
  serverCredentials: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, serverCredentials, (error, port) => {
      if (error) reject(error);
      else resolve(port);
    });
  });
}

const malformed = Symbol('malformed request');
interface MalformedRequest {
  [malformed]: TallyError;
}

/**
 * A service definition whose requests that fail to decode reach the handler
 * as a marker instead of being answered INTERNAL by grpc-js, so `unary` can
 * answer INVALID_ARGUMENT (G7: malformed messages get a clear status). A
 * request larger than its method's bound (requestBytesMaxOf) is refused
 * RESOURCE_EXHAUSTED without being decoded: the method's real maximum is
 * often far below the server-wide message limit.
 */
export function guardMalformed(definition: ServiceDefinition, requestBytesMaxOf?: (method: string) => number): ServiceDefinition {
  const guarded: Record<string, ServiceDefinition[string]> = {};
  for (const [name, method] of Object.entries(definition)) {
    const bytesMax = requestBytesMaxOf?.(name) ?? Infinity;
    guarded[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        if (bytes.length > bytesMax) {
          const refusal = new TallyError(
            ErrorCode.resourceExhausted,
            `${name} request of ${bytes.length} bytes; the limit for ${name} is ${bytesMax} bytes`,
          );
          return { [malformed]: refusal } satisfies MalformedRequest;
        }
        try {
          return method.requestDeserialize(bytes);
        } catch (error) {
          const refusal = new TallyError(ErrorCode.invalidArgument, `malformed request: ${(error as Error).message}`);
          return { [malformed]: refusal } satisfies MalformedRequest;
        }
      },
    };
  }
  return guarded;
}

/** The refusal a guarded definition put in place of a request that failed to decode or was too large (a stream's frame too), or undefined. */
export function malformedRefusalOf(request: unknown): TallyError | undefined {
  if (typeof request !== 'object' || request === null || !(malformed in request)) return undefined;
  return (request as MalformedRequest)[malformed];
}

/**
 * Wraps an async handler: its result is sent, anything it throws is mapped to
 * a status with its google.rpc details. changesNothing: a read, whose every
 * failure is reported NOT_APPLIED.
 */
export function unary<Request, Response>(
  handler: (request: Request, call: ServerUnaryCall<Request, Response>) => Promise<Response> | Response,
  changesNothing = false,
): handleUnaryCall<Request, Response> {
  return (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
    let result: Promise<Response> | Response;
    const request = call.request as unknown;
    if (typeof request === 'object' && request !== null && malformed in request) {
      callback(toServiceError((request as MalformedRequest)[malformed]));
      return;
    }
    try {
      result = handler(call.request, call);
    } catch (error) {
      callback(toServiceError(error, changesNothing));
      return;
    }
    Promise.resolve(result).then(
      (response) => callback(null, response),
      (error: unknown) => callback(toServiceError(error, changesNothing)),
    );
  };
}

/** Shuts the server down, forcing it after timeoutMs. */
export function shutdownServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Runs `drain` once on SIGTERM, SIGINT or the launcher's exit, logs the
 * shutdown, and exits 0 when it is done — or 1 if it has not finished
 * shutdownTimeoutMs (+1 s) later, whatever it is stuck on.
 */
export function onShutdown(options: {
  logger: Logger;
  shutdownTimeoutMs: number;
  env: NodeJS.ProcessEnv;
  drain: () => Promise<Record<string, unknown>>;
}): void {
  const { logger, shutdownTimeoutMs } = options;
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('shutdown', { signal, shutdownTimeoutMs });
    setTimeout(() => {
      logger.error('forced exit: shutdown took longer than allowed', { shutdownTimeoutMs });
      process.exit(1);
    }, shutdownTimeoutMs + 1_000).unref();
    const fields = await options.drain();
    logger.info('stopped', fields);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWithParent(options.env, () => void stop('parent exited'));
}
