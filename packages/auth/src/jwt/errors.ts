export type TokenErrorReason =
  | 'malformed'
  | 'unsupported_algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer';

const TOKEN_ERROR_MESSAGES: Record<TokenErrorReason, string> = {
  malformed: 'token is malformed',
  unsupported_algorithm: 'token algorithm is not supported',
  unknown_key: 'token was signed by an unknown key',
  bad_signature: 'token signature is invalid',
  expired: 'token has expired',
  not_yet_valid: 'token is not valid yet',
  wrong_audience: 'token audience is not accepted here',
  wrong_issuer: 'token issuer is not trusted',
};

/** The only error a token verifier throws for a rejected token. The message never contains the token. */
export class TokenError extends Error {
  readonly reason: TokenErrorReason;

  constructor(reason: TokenErrorReason) {
    super(TOKEN_ERROR_MESSAGES[reason]);
    this.name = 'TokenError';
    this.reason = reason;
  }
}

/**
 * The JWKS could not be obtained (network failure, non-200 status, invalid document). This is an
 * infrastructure failure, not a verdict on the token: callers should answer 503, not 401.
 */
export class JwksUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JwksUnavailableError';
  }
}
