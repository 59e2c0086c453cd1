// TLS for every hop and the rule that keeps plaintext on loopback. One
// certificate per process serves both ways: as the server's certificate and
// as its client certificate when it calls another process (router -> node,
// primary -> follower), so inside the cluster every hop is mutual TLS. What a
// certificate may do is its role (peer-role.ts), not merely its CA.
import fs from 'node:fs';
import { ServerCredentials, credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { ConfigError, type ConfigReader } from '../config.ts';
import { isLoopbackHost } from '../../wire/index.ts';
import { checkServerRole } from './peer-role.ts';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** The cluster CA: peers must chain to it. */
  caFile: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

/** Reads --tls-cert/--tls-key/--tls-ca (TALLY_TLS_*): all three or none. */
export function readTlsFiles(reader: ConfigReader): TlsFiles | undefined {
  const certFile = reader.nonEmptyString('tls-cert') ?? '';
  const keyFile = reader.nonEmptyString('tls-key') ?? '';
  const caFile = reader.nonEmptyString('tls-ca') ?? '';
  const given = [certFile, keyFile, caFile].filter((file) => file !== '').length;
  if (given === 0) return undefined;
  if (given !== 3) throw new ConfigError('--tls-cert, --tls-key and --tls-ca go together: give all three or none');
  return { certFile, keyFile, caFile };
}

export function loadTls(files: TlsFiles): TlsMaterial {
  const read = (file: string, what: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new ConfigError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  return { cert: read(files.certFile, '--tls-cert'), key: read(files.keyFile, '--tls-key'), ca: read(files.caFile, '--tls-ca') };
}

/** Server side; requireClientCert makes it mutual TLS (nodes always do). */
export function serverCredentialsOf(tls: TlsMaterial | undefined, requireClientCert: boolean): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(tls.ca, [{ private_key: tls.key, cert_chain: tls.cert }], requireClientCert);
}

/**
 * Client side of a call to a node (the router's and a primary's only
 * outgoing calls): verifies the server against the CA and that its
 * certificate is a node's, and presents our certificate.
 */
export function channelCredentialsOf(tls: TlsMaterial | undefined): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  return credentials.createSsl(tls.ca, tls.key, tls.cert, { checkServerIdentity: checkServerRole('node') });
}

/**
 * Plaintext only on loopback: a process asked to listen elsewhere without
 * TLS refuses to start unless --insecure was given explicitly.
 */
export function checkPlaintextAllowed(listenHost: string, tls: TlsFiles | undefined, insecure: boolean, flag = '--listen'): void {
  if (tls !== undefined || insecure || isLoopbackHost(listenHost)) return;
  throw new ConfigError(
    `refusing to listen on ${listenHost || 'all interfaces'} (${flag}) without TLS: give --tls-cert, --tls-key and --tls-ca, or --insecure to accept plaintext`,
  );
}
