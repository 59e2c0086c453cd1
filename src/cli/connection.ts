// Which routers the CLI talks to and how: addresses, TLS and token, and the
// health check that dials one router directly.
import fs from 'node:fs';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { deadlineIn } from '../wire/index.ts';
import { parseRouterList } from '../client/connection/index.ts';
import { UsageError } from './args.ts';

/** The routers of --router, else TALLY_ROUTER, else the local default; a malformed list is a usage error. */
export function routerAddresses(flags: Map<string, string>): string[] {
  const flag = flags.get('router');
  const [text, what] =
    flag !== undefined
      ? [flag, '--router']
      : process.env.TALLY_ROUTER !== undefined
        ? [process.env.TALLY_ROUTER, 'TALLY_ROUTER']
        : ['127.0.0.1:50051', 'router'];
  try {
    return parseRouterList(text, what);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** TLS files and the token, from flags or TALLY_* environment (never the token itself on the command line). */
export function securityOptions(flags: Map<string, string>): { tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }; token?: string } {
  const read = (file: string, what: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new UsageError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const caFile = flags.get('tls-ca') ?? process.env.TALLY_TLS_CA;
  const certFile = flags.get('tls-cert') ?? process.env.TALLY_TLS_CERT;
  const keyFile = flags.get('tls-key') ?? process.env.TALLY_TLS_KEY;
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  if (certFile !== undefined && caFile === undefined) throw new UsageError('--tls-cert needs --tls-ca');
  const tokenFile = flags.get('token-file') ?? process.env.TALLY_TOKEN_FILE;
  const token = tokenFile !== undefined ? read(tokenFile, '--token-file').toString('utf8').trim() : process.env.TALLY_TOKEN;
  return {
    tls:
      caFile === undefined
        ? undefined
        : {
            ca: read(caFile, '--tls-ca'),
            cert: certFile === undefined ? undefined : read(certFile, '--tls-cert'),
            key: keyFile === undefined ? undefined : read(keyFile, '--tls-key'),
          },
    token,
  };
}

/** grpc.health.v1 Check against any process; a failed call is NOT_SERVING's cousin, UNREACHABLE. */
export async function checkHealth(
  address: string,
  service: string,
  deadlineMs: number,
  security: ReturnType<typeof securityOptions>,
): Promise<string> {
  // Loaded by the one command that checks health: it parses its own proto at load.
  const { service: healthService } = await import('grpc-health-check');
  const HealthClient = makeGenericClientConstructor(healthService as never, 'Health');
  const channelCredentials =
    security.tls === undefined
      ? credentials.createInsecure()
      : credentials.createSsl(security.tls.ca, security.tls.key ?? null, security.tls.cert ?? null);
  const client = new HealthClient(address, channelCredentials) as unknown as {
    check(request: object, options: object, callback: (error: Error | null, response?: { status: string }) => void): void;
    close(): void;
  };
  return new Promise((resolve) => {
    client.check({ service }, { deadline: deadlineIn(deadlineMs) }, (error, response) => {
      client.close();
      resolve(error || response === undefined ? 'UNREACHABLE' : response.status);
    });
  });
}
