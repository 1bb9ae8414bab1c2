/**
 * Type helpers that read request and response shapes of one operation from the types openapi-typescript
 * generates (`operations['getMe']`). Servers type their handlers with these, so a handler that returns a
 * body the contract does not describe fails to compile.
 */
type Content<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export type RequestBodyOf<Op> = Op extends { requestBody: infer R }
  ? Content<R>
  : Op extends { requestBody?: infer R }
    ? Content<NonNullable<R>> | undefined
    : undefined;

export type PathParamsOf<Op> = Op extends { parameters: { path: infer P } }
  ? [P] extends [undefined] | [never]
    ? Record<string, never>
    : NonNullable<P>
  : Record<string, never>;

export type QueryOf<Op> = Op extends { parameters: { query?: infer Q } }
  ? [Q] extends [undefined] | [never]
    ? Record<string, never>
    : NonNullable<Q>
  : Record<string, never>;

type Responses<Op> = Op extends { responses: infer R } ? R : never;

/** Statuses in the 2xx range that the operation declares. */
export type SuccessStatusOf<Op> = Extract<keyof Responses<Op>, 200 | 201 | 202 | 204>;

/** 304 when the operation declares it: a conditional request whose representation has not changed (no body). */
export type NotModifiedStatusOf<Op> = Extract<keyof Responses<Op>, 304>;

export type ResponseBodyOf<Op, S> = S extends keyof Responses<Op> ? Content<Responses<Op>[S]> : never;

/** Statuses answered with an `application/json` body (not problem+json), e.g. a readiness 503. */
type JsonStatusOf<Op> = Extract<
  {
    [S in keyof Responses<Op>]: Responses<Op>[S] extends { content: { 'application/json': unknown } }
      ? S
      : never;
  }[keyof Responses<Op>],
  number
>;

/**
 * The union of `{ status, body }` pairs a handler may return: every declared 2xx status, a declared 304, and
 * any other status the contract answers with a plain JSON body. Errors are thrown, never returned.
 */
export type HandlerResultOf<Op> = {
  [S in SuccessStatusOf<Op> | NotModifiedStatusOf<Op> | JsonStatusOf<Op>]: [ResponseBodyOf<Op, S>] extends [
    never,
  ]
    ? { status: S; body?: undefined; headers?: Record<string, string> }
    : { status: S; body: ResponseBodyOf<Op, S>; headers?: Record<string, string> };
}[SuccessStatusOf<Op> | NotModifiedStatusOf<Op> | JsonStatusOf<Op>];
