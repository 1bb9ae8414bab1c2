/** The SQLSTATE code of a node-postgres error (`err.code`), or undefined for anything else. */
export function pgErrorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** SQLSTATE codes the kit reacts to. */
export const PgErrorCodes = {
  uniqueViolation: '23505',
  duplicateDatabase: '42P04',
  invalidCatalogName: '3D000',
  objectInUse: '55006',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
} as const;
