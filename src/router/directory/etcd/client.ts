// How the etcd directory talks to etcd: client options that suit it, and
// the one mapping from etcd's failures to the statuses callers see.
import fs from 'node:fs';
import { Etcd3, type IOptions } from 'etcd3';
import { ConfigError, etcdTxnOpsMax } from '../../../common/index.ts';
import { ErrorCode, TallyError } from '../../../wire/index.ts';

type HostPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;
/**
 * Calls straight through: with one etcd host a circuit breaker has no other
 * host to send calls to and only delays the return (etcd3's default opens
 * for 5 s after three failures: routers were fresh again ~4 s after etcd
 * came back; without it, within ~10 ms).
 */
const passThroughPolicy = {
  execute: <T>(call: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve().then(() => call({ signal: new AbortController().signal })),
} as unknown as HostPolicy;

/**
 * etcd3 client options that suit the directory: gRPC reconnects at most a
 * second apart (its default backs off to two minutes, far past a lease TTL),
 * no circuit breaker in front of a single host, and no default deadline
 * (the directory sets its own on each call).
 */
export function etcdClientOptions(hosts: readonly string[], credentials?: IOptions['credentials']): IOptions {
  return {
    hosts: [...hosts],
    ...(credentials === undefined ? {} : { credentials }),
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
      // A connection whose packets are silently dropped is noticed in seconds, not at TCP's
      // retransmission timeout (etcd refuses pings more often than every 5 s by default).
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 3_000,
    },
    ...(hosts.length === 1 ? { faultHandling: { host: () => passThroughPolicy } } : {}),
  };
}

/** PEM files for TLS to etcd (--etcd-tls-*): the CA, and a client certificate and key when etcd asks for one. */
export interface EtcdTlsFiles {
  caFile: string;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

/** A client for the directory and the election, its TLS files read once now (a missing file is a one-line config error). */
export function openEtcdClient(endpoints: readonly string[], tls?: EtcdTlsFiles): Etcd3 {
  const read = (file: string, flag: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new ConfigError(`cannot read ${flag} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const credentials =
    tls === undefined
      ? undefined
      : {
          rootCertificate: read(tls.caFile, '--etcd-tls-ca'),
          ...(tls.certFile === undefined || tls.keyFile === undefined
            ? {}
            : { certChain: read(tls.certFile, '--etcd-tls-cert'), privateKey: read(tls.keyFile, '--etcd-tls-key') }),
        };
  return new Etcd3(etcdClientOptions(endpoints, credentials));
}

export function storeError(error: unknown): TallyError {
  if (error instanceof TallyError) return error;
  // One line: grpc-js messages carry the transport's (TLS) error on the next.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  if (message.includes('too many operations in txn request'))
    return new TallyError(
      ErrorCode.internal,
      `etcd refused a transaction as having too many operations: start etcd with --max-txn-ops ${etcdTxnOpsMax} or more (${message})`,
    );
  if (message.includes('request is too large'))
    return new TallyError(
      ErrorCode.resourceExhausted,
      `the change is larger than etcd takes in one request (--max-request-bytes): ${message}`,
    );
  return new TallyError(ErrorCode.unavailable, `the directory store (etcd) is unreachable: ${message}`);
}

/** Why this router refuses exact reads and writes: it cannot vouch for its copy of the directory. */
export function staleError(reason: string): TallyError {
  return new TallyError(ErrorCode.unavailable, `the directory (etcd) cannot be proven current: ${reason}`);
}
