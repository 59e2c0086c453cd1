// The bearer token each call carries: a fixed one (options.token) or one the
// caller's credentials callback gives, asked before every attempt so a
// rotated token is used from the next call on. A callback that fails or
// gives no usable token fails the call as UNAUTHENTICATED with nothing sent.
import { Metadata } from '@grpc/grpc-js';
import { ErrorCode, TallyError, ErrorReason } from '../../wire/index.ts';

/** Gives the token for the next call; cache inside it if getting one is costly. */
export type TokenProvider = () => string | Promise<string>;

export class CallAuth {
  /** The metadata of the last token given: what a stream opened now carries. */
  private latest: Metadata;

  constructor(
    token: string | undefined,
    private readonly provider: TokenProvider | undefined,
  ) {
    if (token !== undefined && provider !== undefined)
      throw new TallyError(ErrorCode.invalidArgument, 'give token or credentials, not both: credentials is for a token that rotates');
    if (provider !== undefined && typeof provider !== 'function')
      throw new TallyError(ErrorCode.invalidArgument, 'credentials must be a function returning the token (or a promise of it)');
    this.latest = metadataOf(token);
  }

  /** Whether calls carry a token at all (the client refuses to send one in plaintext off loopback). */
  get carriesToken(): boolean {
    return this.provider !== undefined || this.latest.get('authorization').length > 0;
  }

  /** The metadata of the last token: for a call opened where waiting is not possible. */
  get current(): Metadata {
    return this.latest;
  }

  /** Whether each attempt must ask for its token (next()); otherwise current is it. */
  get rotating(): boolean {
    return this.provider !== undefined;
  }

  /** The metadata for the next attempt: the fixed token's, or the callback's current token. */
  async next(): Promise<Metadata> {
    if (this.provider === undefined) return this.latest;
    let token: unknown;
    try {
      token = await this.provider();
    } catch (error) {
      throw new TallyError(
        ErrorCode.unauthenticated,
        `the credentials callback failed: ${error instanceof Error ? error.message : String(error)}`,
        undefined,
        { reason: ErrorReason.notApplied, cause: error },
      );
    }
    // A token with a line break or outside printable ASCII cannot be a header value.
    if (typeof token !== 'string' || token === '' || !/^[\x21-\x7e]+$/.test(token))
      throw new TallyError(
        ErrorCode.unauthenticated,
        'the credentials callback gave no usable token: it must return a non-empty string of printable ASCII without spaces',
        undefined,
        { reason: ErrorReason.notApplied },
      );
    this.latest = metadataOf(token);
    return this.latest;
  }
}

function metadataOf(token: string | undefined): Metadata {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
