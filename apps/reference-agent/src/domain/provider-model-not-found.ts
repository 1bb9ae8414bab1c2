/**
 * The exit code of an agent whose provider/model identifier is stale (78, `EX_CONFIG` of sysexits.h). A
 * supervisor that sees it clears only that agent's runtime home and restarts it (spec: errors,
 * `ProviderModelNotFoundError`); any other non-zero exit is an ordinary failure.
 */
export const EXIT_PROVIDER_MODEL_NOT_FOUND = 78;

/** Where the stale identifier was found. */
export type StaleModelSource =
  /** The hub answered `provider_model_unsupported` to a runtime credential refresh. */
  | 'credential_refresh'
  /** The runtime home remembers a model that is not the hub's and not in the hub's catalog. */
  | 'runtime_home';

/**
 * The runtime's provider/model identifier is no longer in the hub's catalog. Recovery is outside the process:
 * stop the agent, clear only its runtime state, restart it (it then uses the hub's current model).
 */
export class ProviderModelNotFoundError extends Error {
  override readonly name = 'ProviderModelNotFoundError';
  readonly model: string;
  readonly source: StaleModelSource;
  /** Catalog identifiers the hub suggested, when it did. */
  readonly closeMatches: string[];

  constructor(input: { model: string; source: StaleModelSource; closeMatches?: string[] }) {
    super(
      input.source === 'runtime_home'
        ? `the runtime home remembers provider/model '${input.model}', which the hub's catalog no longer has`
        : `the hub refused provider/model '${input.model}' on a runtime credential refresh: it is no longer in the catalog`,
    );
    this.model = input.model;
    this.source = input.source;
    this.closeMatches = input.closeMatches ?? [];
  }
}

/**
 * The one log line of a stale model: fields first (the error name, the model, where it was found, the hub's
 * suggestions), then a message naming `ProviderModelNotFoundError` and what happens next. Holds no secret.
 */
export function staleModelLogLine(error: ProviderModelNotFoundError): {
  fields: Record<string, unknown>;
  message: string;
} {
  return {
    fields: {
      error: error.name,
      model: error.model,
      source: error.source,
      close_matches: error.closeMatches,
      exit_code: EXIT_PROVIDER_MODEL_NOT_FOUND,
    },
    message: `${error.name}: ${error.message}; exiting with code ${EXIT_PROVIDER_MODEL_NOT_FOUND} so that only this agent's runtime home is cleared before it restarts`,
  };
}
