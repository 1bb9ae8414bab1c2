export * from './scopes';
export * from './constant-time';
export * from './api-keys';
export * from './console-proxy-key';
// JWT modules also hold package-internal helpers, so their public members are named one by one.
export { AUDIENCES, JWT_ALGORITHM, RESERVED_CLAIMS, isAudience } from './jwt/claims';
export type { Audience } from './jwt/claims';
export { JwksUnavailableError, TokenError } from './jwt/errors';
export type { TokenErrorReason } from './jwt/errors';
export {
  createJwksDocument,
  generateSigningKey,
  jwkThumbprint,
  publicJwkFromPrivateKeyPem,
} from './jwt/keys';
export type { GetJwks, JwksDocument, PublicJwk, SigningKey } from './jwt/keys';
export { createTokenIssuer } from './jwt/issuer';
export type { IssueInput, IssuedToken, TokenIssuer, TokenIssuerOptions } from './jwt/issuer';
export { createTokenVerifier } from './jwt/verifier';
export type { TokenVerifier, TokenVerifierOptions, VerifiedToken } from './jwt/verifier';
export { createRemoteJwks, createStaticJwks } from './jwt/remote-jwks';
export type { RemoteJwksOptions } from './jwt/remote-jwks';
export * from './actors';
export * from './middleware';
