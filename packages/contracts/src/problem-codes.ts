/**
 * Every `code` a public service (hub, Workflow API) or a runtime host's relay answers in a problem+json, with what it means and how to
 * fix it. Each problem's `type` is `/docs/errors/<code>` (a URI reference resolved against the URL of the
 * request), and that page of the service that answered is rendered from this list.
 */
export interface ProblemCodeDoc {
  /** The stable snake_case code clients branch on. */
  code: string;
  /** The HTTP statuses the code is answered with (most codes have one). */
  status: readonly number[];
  /** One line: what went wrong. */
  title: string;
  /** What it means, in a sentence or two. */
  meaning: string;
  /** What the caller does about it. */
  fix: string;
}

/** Where the page of a problem code lives on each public service. */
export const PROBLEM_TYPE_PATH = '/docs/errors/';

/** The `type` of a problem with this code: a URI reference resolved against the request's URL. */
export function problemTypeUrl(code: string): string {
  return `${PROBLEM_TYPE_PATH}${code}`;
}

const RETRY_SHORTLY =
  'Retry after a short wait (honour `Retry-After` when present); the SDK does this for reads.';

export const PROBLEM_CODES: readonly ProblemCodeDoc[] = [
  // Requests in general
  {
    code: 'malformed_json',
    status: [400],
    title: 'The body is not valid JSON',
    meaning: 'The request body could not be parsed as JSON.',
    fix: 'Send a valid JSON document with `Content-Type: application/json`; check quoting and trailing commas.',
  },
  {
    code: 'payload_too_large',
    status: [413],
    title: 'The body is too large',
    meaning:
      'The request body is larger than the endpoint accepts (1 MB unless the deployment says otherwise).',
    fix: 'Send a smaller body: keep large evidence or files outside the request and send a reference instead.',
  },
  {
    code: 'unsupported_encoding',
    status: [415],
    title: 'Unsupported content encoding',
    meaning: 'The `Content-Encoding` of the request body is not one the service decodes.',
    fix: 'Send the body uncompressed, or with `gzip`, `deflate` or `br`.',
  },
  {
    code: 'body_encoding_invalid',
    status: [400],
    title: 'The compressed body does not decode',
    meaning:
      'The request body is declared as `gzip`, `deflate` or `br` in `Content-Encoding`, but its bytes are not valid data of that encoding.',
    fix: 'Compress the body with the encoding you name, or send it uncompressed without `Content-Encoding`.',
  },
  {
    code: 'unsupported_charset',
    status: [415],
    title: 'Unsupported charset',
    meaning: 'The request body declares a charset other than UTF-8.',
    fix: 'Encode the body as UTF-8 (`Content-Type: application/json; charset=utf-8` or no charset at all).',
  },
  {
    code: 'unsupported_media_type',
    status: [415],
    title: 'The body is not JSON',
    meaning: 'The operation takes a JSON body and the request declared another media type.',
    fix: 'Send the body as `application/json`.',
  },
  {
    code: 'request_aborted',
    status: [400],
    title: 'The body was cut short',
    meaning: 'The connection ended before the whole request body arrived.',
    fix: 'Send the request again; if it keeps happening, check proxies or timeouts between you and the service.',
  },
  {
    code: 'request_size_invalid',
    status: [400],
    title: 'Content-Length does not match the body',
    meaning: 'The number of bytes received differs from the `Content-Length` header.',
    fix: 'Let your HTTP client compute `Content-Length`, or do not set it by hand.',
  },
  {
    code: 'body_required',
    status: [400],
    title: 'A JSON body is required',
    meaning: 'This operation needs a request body and none was sent.',
    fix: 'Send the JSON body the operation documents (see the API reference at `/docs`).',
  },
  {
    code: 'validation_failed',
    status: [400],
    title: 'The request does not match the contract',
    meaning:
      'A parameter, header or body field is missing, has the wrong type or breaks a constraint. `errors` lists each failure with its `location` (e.g. `body/name`, `query/limit`).',
    fix: 'Correct each field named in `errors` to match the operation in the API reference (`/docs`).',
  },
  {
    code: 'intent_blank',
    status: [400],
    title: 'The intent is blank',
    meaning:
      'The intent of a resolve, preflight or invoke request holds only whitespace, so there is nothing to match or run.',
    fix: 'Send the request in words: an intent with at least one character that is not whitespace.',
  },
  {
    code: 'text_invalid',
    status: [400],
    title: 'Text with forbidden characters',
    meaning:
      'A text value, an object key, a path or query parameter or a header holds a NUL character (U+0000) or an unpaired UTF-16 surrogate, which cannot be stored; `errors` names each place. Other control characters are accepted and stored as sent.',
    fix: 'Remove NUL characters and make sure the text is valid Unicode before sending it.',
  },
  {
    code: 'patch_empty',
    status: [400],
    title: 'Nothing to change',
    meaning: 'A PATCH request carried no field to change.',
    fix: 'Send at least one of the fields the operation accepts.',
  },
  {
    code: 'cursor_invalid',
    status: [400],
    title: 'Unknown list cursor',
    meaning: 'The `cursor` is not one this API returned, or it belongs to another list or filter.',
    fix: 'Start the listing again without `cursor` and pass back only the `next_cursor` values you receive.',
  },
  {
    code: 'invalid_cursor',
    status: [400],
    title: 'Unknown list cursor',
    meaning: 'The audit listing `cursor` is not one this API issued.',
    fix: 'Start again without `cursor` and pass back only the cursor values the listing returned.',
  },
  {
    code: 'invalid_time_range',
    status: [400],
    title: 'The time range is reversed',
    meaning: '`until` is before `since`.',
    fix: 'Send `since` at or before `until` (both RFC 3339 date-times).',
  },
  {
    code: 'time_range_invalid',
    status: [400],
    title: 'The time range is reversed',
    meaning: '`since` is after `until`, so the range selects nothing.',
    fix: 'Send `since` at or before `until` (both RFC 3339 date-times).',
  },
  {
    code: 'route_not_found',
    status: [404],
    title: 'No such route',
    meaning: 'No operation of this service answers this method and path.',
    fix: 'Check the path and its `/api/v1` prefix against the API reference (`/docs`) and `/openapi.json`.',
  },
  {
    code: 'method_not_allowed',
    status: [405],
    title: 'Method not allowed here',
    meaning: 'The path exists, but not with this HTTP method. The `Allow` header lists the methods it takes.',
    fix: 'Use one of the methods in `Allow`.',
  },
  {
    code: 'internal_error',
    status: [500],
    title: 'Unexpected server error',
    meaning: 'The service failed while answering. No internal detail is returned.',
    fix: 'Retry later; if it persists, report it quoting the `request_id` of the answer.',
  },
  {
    code: 'response_contract_violation',
    status: [500],
    title: 'The answer broke the contract',
    meaning:
      'The service built an answer that does not match its own OpenAPI document, and refused to send it.',
    fix: 'This is a fault of the service, not of the request: report it quoting the `request_id`.',
  },
  {
    code: 'database_unavailable',
    status: [503],
    title: 'The database is unreachable',
    meaning: 'The service cannot reach its database right now (restart, failover or overload).',
    fix: RETRY_SHORTLY,
  },
  {
    code: 'overloaded',
    status: [503],
    title: 'The service is overloaded',
    meaning:
      'The Workflow API holds as many requests as it admits and yours waited its turn too long (or the line was full); nothing of it was done.',
    fix: RETRY_SHORTLY,
  },
  {
    code: 'hub_unavailable',
    status: [503],
    title: 'The hub is unreachable',
    meaning:
      'The Workflow API could not reach the hub to check the credential, the project or the workspace.',
    fix: RETRY_SHORTLY,
  },
  {
    code: 'jwks_unavailable',
    status: [503],
    title: "The hub's signing keys cannot be read",
    meaning:
      'The service could not fetch the keys that verify bearer tokens; this says nothing about your token.',
    fix: RETRY_SHORTLY,
  },

  // Credentials and access
  {
    code: 'credential_missing',
    status: [401],
    title: 'No credential',
    meaning: 'The operation needs a credential and the request carried none.',
    fix: 'Send a workspace API key in `X-API-Key`, or a bearer token in `Authorization: Bearer …`, as the operation lists.',
  },
  {
    code: 'credential_invalid',
    status: [401],
    title: 'The credential is not valid',
    meaning:
      'The API key or token is unknown, revoked, expired or malformed, was signed by another issuer, or more than one credential was sent.',
    fix: 'Send exactly one current credential: create a new API key, sign in again or refresh the token.',
  },
  {
    code: 'invalid_credentials',
    status: [401],
    title: 'Wrong email or password',
    meaning: 'The sign-in did not match an account.',
    fix: 'Check the email and password; repeated failures lock sign-in for a while (`login_locked`).',
  },
  {
    code: 'login_locked',
    status: [429],
    title: 'Sign-in temporarily locked',
    meaning: 'Too many failed sign-ins for this account.',
    fix: 'Wait for the time in `Retry-After`, then sign in with the right password.',
  },
  {
    code: 'login_throttled',
    status: [429],
    title: 'Too many failed sign-ins from this client',
    meaning:
      'This client (by network address) failed too many sign-ins in the last hour, for this account or in all.',
    fix: 'Wait for the time in `Retry-After`; check the email and password before trying again.',
  },
  {
    code: 'actor_not_allowed',
    status: [403],
    title: 'This kind of credential cannot call this operation',
    meaning:
      'The operation accepts other actors (e.g. only a participant, only an agent token, only a workspace API key); each operation lists them in `x-svc-actors`.',
    fix: 'Call it with a credential of an accepted kind (see the operation in `/docs`).',
  },
  {
    code: 'scope_missing',
    status: [403],
    title: 'The key lacks a scope',
    meaning:
      'The API key or agent token does not hold every scope the operation needs; `missing_scopes` lists them.',
    fix: 'Create a key with the scopes in `missing_scopes` (or a preset that includes them) and use it.',
  },
  {
    code: 'workspace_forbidden',
    status: [403],
    title: 'No access to this workspace',
    meaning: 'The credential belongs to another workspace, or the participant is not a member of this one.',
    fix: 'Use a credential of the workspace that owns the resource, or ask an owner to add you as a member.',
  },
  {
    code: 'role_forbidden',
    status: [403],
    title: 'Your workspace role is not enough',
    meaning: 'The action needs another workspace role (the detail names the roles and yours).',
    fix: 'Ask a workspace owner or admin to do it, or to give you a role that may.',
  },
  {
    code: 'owner_required',
    status: [403],
    title: 'Only an owner may do this',
    meaning: 'Granting, changing or removing the owner role is reserved to owners.',
    fix: 'Ask a workspace owner.',
  },
  {
    code: 'approval_role_required',
    status: [403],
    title: 'Only an owner or admin may decide an approval',
    meaning: 'Approving or rejecting a run needs the owner or admin role in its workspace.',
    fix: 'Ask an owner or admin of the workspace to decide it.',
  },
  {
    code: 'assistance_role_required',
    status: [403],
    title: "Only an owner or admin may change a project's model assistance",
    meaning: 'Model-assistance settings of a project are changed by workspace owners and admins only.',
    fix: 'Ask an owner or admin of the workspace to change them.',
  },
  {
    code: 'assistance_provider_required',
    status: [400],
    title: 'Model assistance needs a provider, a model and a base URL',
    meaning:
      'Assistance cannot be turned on before the project names the provider, the model and its base URL.',
    fix: 'Send `provider`, `model` and `base_url` with `enabled: true` (or set them first).',
  },
  {
    code: 'assistance_data_policy_refused',
    status: [400],
    title: 'A remote model provider needs data_may_leave_workspace',
    meaning:
      "The base URL is not on this machine, so intents would leave the workspace; the project's policy forbids it.",
    fix: 'Set `data_may_leave_workspace: true` deliberately, or use a loopback (local) provider.',
  },
  {
    code: 'assistance_base_url_invalid',
    status: [400],
    title: 'The model base URL is not usable',
    meaning: 'The base URL is not an absolute http(s) URL, or it carries credentials, a query or a fragment.',
    fix: 'Send the plain base URL (for example `https://host/v1`); the workspace provider credential is sent instead.',
  },
  {
    code: 'presented_key_mismatch',
    status: [500],
    title: 'The presented API key disagrees with the authenticated one',
    meaning: 'An internal consistency check failed while pulling runtime configuration.',
    fix: 'Retry; if it persists, report it quoting the `request_id`.',
  },

  // Workspaces, members, API keys
  {
    code: 'workspace_not_found',
    status: [404],
    title: 'No such workspace',
    meaning: 'The workspace id or slug does not exist.',
    fix: 'Check the workspace id or slug (`GET /api/v1/me` lists yours).',
  },
  {
    code: 'workspace_slug_taken',
    status: [409],
    title: 'Workspace slug already used',
    meaning: 'Workspace slugs are unique.',
    fix: 'Choose another slug.',
  },
  {
    code: 'member_not_found',
    status: [404],
    title: 'Not a member',
    meaning: 'That participant is not a member of this workspace.',
    fix: 'Check the participant id against the workspace members list.',
  },
  {
    code: 'participant_not_found',
    status: [404],
    title: 'No such member',
    meaning: "The participant is not a member of the team's workspace.",
    fix: 'Add the participant to the workspace first, then to the team.',
  },
  {
    code: 'already_member',
    status: [409],
    title: 'Already a member',
    meaning: 'The person is already a member of this workspace.',
    fix: 'Nothing to add; change the existing membership instead if the role must change.',
  },
  {
    code: 'last_owner',
    status: [409],
    title: 'The last owner cannot leave',
    meaning: 'A workspace needs at least one owner.',
    fix: 'Make another member an owner first.',
  },
  {
    code: 'password_required',
    status: [400],
    title: 'An initial password is needed',
    meaning:
      'Adding a member always takes an initial password; it is used when the email has no account yet (an existing account keeps its own).',
    fix: 'Send `password` with an initial password of at least 12 characters.',
  },
  {
    code: 'api_key_not_found',
    status: [404],
    title: 'No such API key',
    meaning: 'The key id does not exist in this workspace.',
    fix: 'List the workspace API keys and use an id from the list.',
  },
  {
    code: 'preset_or_scopes_required',
    status: [400],
    title: 'Give a preset or scopes',
    meaning: 'An API key is created from exactly one of `preset` or `scopes`.',
    fix: 'Send either `preset` or `scopes`, not both and not neither.',
  },
  {
    code: 'unknown_preset',
    status: [400],
    title: 'Unknown key preset',
    meaning: 'The preset is not one of the defined presets.',
    fix: 'Use `read-only`, `automation` or `agent-runtime`, or list the scopes explicitly.',
  },
  {
    code: 'unknown_scopes',
    status: [400],
    title: 'Unknown scopes',
    meaning: 'Some requested scopes do not exist (the detail lists them).',
    fix: 'Use scopes as named in the API reference (`family:action`, e.g. `workflows:run`).',
  },
  {
    code: 'expiry_in_past',
    status: [400],
    title: 'Expiry in the past',
    meaning: '`expires_at` must be in the future.',
    fix: 'Send a future `expires_at`, or leave it out for a key that does not expire.',
  },

  // Projects, teams, repos, providers
  {
    code: 'project_not_found',
    status: [400, 404],
    title: 'No such project',
    meaning: 'The project id or code does not exist in this workspace (or your credential cannot see it).',
    fix: 'Check the project id (`prj_…`) or code; the workspace projects list shows them.',
  },
  {
    code: 'project_code_taken',
    status: [409],
    title: 'Project code already used',
    meaning: 'Project codes are unique within a workspace.',
    fix: 'Choose another code.',
  },
  {
    code: 'project_archived',
    status: [409],
    title: 'The project is archived',
    meaning: 'An archived project keeps its history but takes no new invocations.',
    fix: 'Unarchive the project (`POST /api/v1/projects/{projectId}/unarchive`) or invoke in an active project.',
  },
  {
    code: 'team_not_found',
    status: [400, 404],
    title: 'No such team',
    meaning: 'The team id does not exist in this workspace.',
    fix: 'Check the team id against the workspace teams list.',
  },
  {
    code: 'team_name_taken',
    status: [409],
    title: 'Team name already used',
    meaning: 'Team names are unique within a workspace.',
    fix: 'Choose another name.',
  },
  {
    code: 'project_team_not_found',
    status: [404],
    title: 'The team is not assigned to the project',
    meaning: 'There is no assignment of this team to this project to remove.',
    fix: "List the project's teams and use one of them.",
  },
  {
    code: 'repo_not_found',
    status: [404],
    title: 'No such repo',
    meaning: 'The repo id does not exist in this workspace.',
    fix: 'Check the repo id against the workspace repos list.',
  },
  {
    code: 'repo_name_taken',
    status: [409],
    title: 'Repo name already used',
    meaning: 'Repo names are unique within a workspace.',
    fix: 'Choose another name, or use the existing repo.',
  },
  {
    code: 'repo_url_invalid',
    status: [400],
    title: 'Unusable repo URL',
    meaning: 'The repo URL is not an acceptable git URL (the detail says why).',
    fix: 'Send an https or ssh git URL without embedded credentials.',
  },
  {
    code: 'repo_credential_invalid',
    status: [400],
    title: 'Unusable repo credential',
    meaning: 'The token or key sent for the repo is not acceptable (the detail says why).',
    fix: 'Send the credential exactly as issued by the git host, without surrounding whitespace.',
  },
  {
    code: 'provider_unknown',
    status: [400],
    title: 'Unknown provider',
    meaning: 'The provider is not in the provider catalog (the detail lists the known ones).',
    fix: 'Use a provider from `GET /api/v1/provider-models`.',
  },
  {
    code: 'provider_secret_invalid',
    status: [400],
    title: 'The provider secret looks damaged',
    meaning: 'The secret starts or ends with whitespace, usually a copied line break.',
    fix: 'Paste the secret again without leading or trailing whitespace.',
  },
  {
    code: 'provider_credential_not_found',
    status: [404],
    title: 'No credential for this provider',
    meaning: 'The workspace has no stored credential for the provider.',
    fix: 'Nothing to revoke; set one with the provider credential operation if needed.',
  },
  {
    code: 'provider_credential_unavailable',
    status: [409],
    title: 'No authorization for the provider',
    meaning:
      "The hub does not manage this provider and the workspace has no credential for it, so the agent's runtime cannot be authorized.",
    fix: 'Store a credential for the provider in the workspace, or pick a model of a provider the hub manages.',
  },
  {
    code: 'provider_model_unsupported',
    status: [400, 409],
    title: 'Unsupported provider/model identifier',
    meaning:
      'The model is not an exact identifier of the current catalog (aliases are not accepted); `close_matches` suggests identifiers.',
    fix: 'Pick the exact identifier from `GET /api/v1/provider-models`.',
  },
  {
    code: 'model_required',
    status: [400, 409],
    title: 'The agent has no model',
    meaning: 'Starting the agent, or renewing its runtime credential, needs a model and none is set.',
    fix: 'Pass `model` with an exact provider/model identifier from the current catalog.',
  },

  // Runtime hosts
  {
    code: 'no_runtime_host',
    status: [404],
    title: 'The workspace has no runtime host',
    meaning: 'Runtime configuration is pulled for a runtime host, and the workspace has none.',
    fix: 'Register one (`POST /api/v1/workspaces/{workspace}/runtime-hosts`), then pull its runtime config.',
  },
  {
    code: 'runtime_host_not_found',
    status: [400, 404],
    title: 'No such runtime host',
    meaning: 'The runtime host id does not exist in this workspace.',
    fix: 'Use the host inventory id (`rti_…`) of a registered host.',
  },
  {
    code: 'runtime_host_draining',
    status: [409],
    title: 'The runtime host is draining',
    meaning:
      'The host was asked to drain: it takes no new spawns, stages or handoffs while its agents finish the stages they hold.',
    fix: 'Place the work on another host; the host takes work again after `svc runtime resume` or a fresh `svc runtime up`.',
  },
  {
    code: 'runtime_host_name_taken',
    status: [409],
    title: 'Runtime host name already used',
    meaning: 'Runtime host names are unique within a workspace.',
    fix: 'Choose another name, or use the registered host.',
  },
  {
    code: 'runtime_host_not_ready',
    status: [409],
    title: 'The runtime host is not ready',
    meaning: 'The host has no fresh heartbeat, or its relay is not ready for a relay spawn.',
    fix: 'Start the runtime on the host (`svc runtime up`) and retry when it heartbeats as ready.',
  },
  {
    code: 'runtime_instance_id_required',
    status: [400],
    title: 'Name the runtime host',
    meaning: 'The workspace has several runtime hosts, so the request must say which one.',
    fix: 'Send `runtime_instance_id` with the host inventory id (`rti_…`).',
  },
  {
    code: 'runtime_instance_id_invalid',
    status: [400],
    title: 'Malformed runtime host id',
    meaning: 'A host inventory id is `rti_` followed by 26 characters.',
    fix: 'Copy the id of the host as the runtime hosts list shows it.',
  },
  {
    code: 'runtime_bundle_id_not_allowed',
    status: [400],
    title: 'A runtime bundle id was given as a host id',
    meaning: "The value is the runtime bundle id from the host's runtime.env, not the host inventory id.",
    fix: 'Use the host inventory id (`rti_…`).',
  },
  {
    code: 'runtime_bundle_conflict',
    status: [409],
    title: 'The runtime bundle belongs to another workspace',
    meaning: "The heartbeat's runtime bundle was issued for another workspace.",
    fix: "Check the host's runtime.env; pull the runtime configuration of this workspace again.",
  },
  {
    code: 'runtime_port_conflict',
    status: [400],
    title: 'Relay and console router on the same address',
    meaning: 'The console router and the relay of a host cannot listen on the same host and port.',
    fix: 'Give them different ports.',
  },
  {
    code: 'runtime_url_invalid',
    status: [400],
    title: 'Unusable runtime URL',
    meaning:
      'A public URL of the host must be absolute, without credentials, query or fragment; `field` names it.',
    fix: 'Send an absolute https URL (http only for loopback addresses) for the field named in `field`.',
  },
  {
    code: 'runtime_url_insecure',
    status: [400],
    title: 'Runtime URL must use https',
    meaning: 'Plain http is accepted only for loopback addresses; `field` names the URL.',
    fix: 'Use an https URL for the field named in `field`.',
  },
  {
    code: 'workdir_root_invalid',
    status: [400],
    title: 'Unusable workdir root',
    meaning:
      "The host's workdir root must be an absolute path without `.`/`..` segments or control characters, and not `/`.",
    fix: 'Send an absolute directory such as `/srv/svc/agents`.',
  },
  {
    code: 'workdir_outside_root',
    status: [400, 409],
    title: "The workdir is outside the host's workdir root",
    meaning: "An agent's workdir must be inside its runtime host's workdir root.",
    fix: 'Use a workdir under the workdir root, or register the agent again after the root changed.',
  },

  // Agent spawns
  {
    code: 'agent_spawn_not_found',
    status: [404],
    title: 'No such agent spawn',
    meaning: 'No spawn has this id in the workspace (a spawn of another workspace is reported the same way).',
    fix: 'List the spawns with `GET /api/v1/workspaces/{workspace}/agent-spawns` and use one of their ids.',
  },
  {
    code: 'spawn_policy_off',
    status: [409],
    title: 'Spawning is off',
    meaning:
      "The project's effective spawn policy (its override, else the workspace's) is not enabled; it is off by default.",
    fix: 'A workspace owner or admin enables it with `PUT /api/v1/workspaces/{workspace}/spawn-policy` (or the project override).',
  },
  {
    code: 'spawn_model_not_allowed',
    status: [409],
    title: 'The spawn policy does not allow this model',
    meaning:
      'The model asked for is not in `allowed_models`, or the policy allows no model of the current catalog.',
    fix: "Ask for an allowed model, or add an exact catalog identifier to the policy's `allowed_models`.",
  },
  {
    code: 'spawn_capability_not_allowed',
    status: [409],
    title: 'The spawn policy does not allow these capabilities',
    meaning: "Every capability of a spawned agent must be listed in the policy's `allowed_capabilities`.",
    fix: 'Ask for allowed capabilities only, or add them to the policy.',
  },
  {
    code: 'spawn_command_not_allowed',
    status: [409],
    title: 'The spawn policy does not allow this command key',
    meaning: "The command key is not in the policy's `allowed_command_keys`.",
    fix: "Use an allowed command key, or add it to the policy (the host's relay must allow it too).",
  },
  {
    code: 'spawn_no_ready_host',
    status: [409],
    title: 'No runtime host can take a spawn',
    meaning: 'No runtime host of the workspace has a fresh heartbeat and a ready relay.',
    fix: 'Start the runtime on a host (`svc runtime up`) and check its relay (`svc internal relay health`), then retry.',
  },
  {
    code: 'spawn_host_at_limit',
    status: [429],
    title: 'Every spawn-ready host is at its limit',
    meaning:
      "Each spawn-ready host already runs the policy's `max_running_agents_per_host` agents or its own `max_agents` (spawns in progress count). The answer carries `Retry-After`.",
    fix: 'Ask again after `Retry-After` seconds; or stop agents that are no longer needed, add a host, or raise the limit (the spawn policy, or the host with `PUT /api/v1/runtime-hosts/{hostId}/limits`).',
  },
  {
    code: 'spawn_host_busy',
    status: [429],
    title: 'Every spawn-ready host has its limit of spawns in progress',
    meaning:
      'Each spawn-ready host that has room for an agent already has its `max_concurrent_spawns` spawns in progress. The answer carries `Retry-After`.',
    fix: 'Ask again after `Retry-After` seconds (a spawn usually ends within it), or raise the host limit with `PUT /api/v1/runtime-hosts/{hostId}/limits`.',
  },
  {
    code: 'spawn_in_progress',
    status: [409],
    title: 'A spawn of this agent is in progress',
    meaning: 'Another spawn of an agent with this name has not ended yet.',
    fix: 'Wait for that spawn to end (read it with GET), or spawn under another name.',
  },
  {
    code: 'spawn_name_unavailable',
    status: [503],
    title: 'No free agent name',
    meaning: 'The hub could not find a free generated agent name for the spawn.',
    fix: RETRY_SHORTLY,
  },
  {
    code: 'spawn_id_requires_relay',
    status: [400],
    title: 'spawn_id needs the relay launch path',
    meaning: 'A start names a relay spawn (`spawn_id`) but its launch path is not `relay`.',
    fix: 'Send `spawn_id` only with `launch_path: relay`, or leave it out for a direct start.',
  },

  // A runtime host's relay (POST /spawn)
  {
    code: 'relay_token_missing',
    status: [401],
    title: 'The relay token is missing',
    meaning: 'A spawn request reached the relay without the `x-svc-relay-token` header.',
    fix: "Send the host's relay token in `x-svc-relay-token` (the hub holds it sealed and sends it on a hub spawn).",
  },
  {
    code: 'relay_token_invalid',
    status: [403],
    title: 'The relay token is wrong',
    meaning: "The `x-svc-relay-token` header is not this host's relay token.",
    fix: "Use the current relay token of the host (a runtime-config pull rotates it); never a key or another host's token.",
  },
  {
    code: 'relay_spawn_disabled',
    status: [503],
    title: 'This relay serves no spawns',
    meaning: 'The relay runs without a relay token (`SVC_RELAY_TOKEN`), so it refuses every spawn.',
    fix: 'Run the relay through `svc runtime up` after `svc config pull-runtime`, which gives it the token.',
  },
  {
    code: 'host_not_allowed',
    status: [403],
    title: 'The Host header is not this relay',
    meaning:
      "The request's `Host` names neither a loopback address nor the relay's public hostname (DNS rebinding).",
    fix: 'Call the relay at 127.0.0.1 or at its public relay URL; add other names to `SVC_RELAY_ALLOWED_HOSTS`.',
  },
  {
    code: 'spawn_id_conflict',
    status: [409],
    title: 'The spawn id was used for another spawn',
    meaning: 'The relay has already taken this `spawn_id` with a different request body.',
    fix: 'Repeat a spawn with exactly the same body; use a new `spawn_id` for a different spawn.',
  },
  {
    code: 'command_not_allowed',
    status: [422],
    title: 'The command key is not allowed on this host',
    meaning: "`command_key` is not in the host's allow-list of agent programs (`SVC_RELAY_COMMANDS`).",
    fix: "Use a key the host allows, or add the program to the host's `SVC_RELAY_COMMANDS`.",
  },
  {
    code: 'start_rule_violated',
    status: [422],
    title: 'svc start refused the spawn',
    meaning:
      'The local `svc start` refused the request; `rule` names the direct start rule, `cli_code` its own code.',
    fix: 'Correct what the rule names (project or workdir, team, model, serve port) and spawn again with a new spawn id.',
  },
  {
    code: 'host_not_spawn_ready',
    status: [503],
    title: 'The host cannot take spawns now',
    meaning:
      'The relay lacks what spawns need (svc, the host id, hub settings) or `svc runtime up` is not running.',
    fix: 'Run the host with `svc runtime up` and check `svc config doctor`; the same spawn id may be tried again.',
  },
  {
    code: 'spawn_timeout',
    status: [504],
    title: 'The spawn did not finish in time',
    meaning:
      '`svc start` did not finish within the start timeout; its process group was stopped, and the agent with it.',
    fix: "Check the agent program (it must come up on its serve port) or raise the host's `SVC_RELAY_START_TIMEOUT_MS`.",
  },
  {
    code: 'spawn_failed',
    status: [502],
    title: 'svc start failed',
    meaning:
      '`svc start` ended without starting the agent, for a reason other than a start rule (`cli_code`, `exit_code`).',
    fix: "Read the relay's spawn log on the host and `svc start`'s code; spawn again with a new spawn id.",
  },
  {
    code: 'spawn_interrupted',
    status: [502],
    title: 'The relay stopped during the spawn',
    meaning: 'The relay restarted while this spawn was in flight, so its outcome is unknown.',
    fix: 'Check `svc list` on the host, then spawn again with a new spawn id if the agent is not there.',
  },
  // Runtime environments and their tunnels
  {
    code: 'runtime_environment_not_found',
    status: [404],
    title: 'No such runtime environment',
    meaning: 'The runtime environment name does not exist in this workspace.',
    fix: "List the workspace's runtime environments and use a name from it.",
  },
  {
    code: 'runtime_instance_ids_required',
    status: [400],
    title: 'Name the hosts of the environment',
    meaning: 'The workspace has no runtime host, or several, so the environment hosts must be named.',
    fix: 'Register a runtime host first, or send `runtime_instance_ids` with the host inventory ids.',
  },
  {
    code: 'runtime_host_in_other_environment',
    status: [409],
    title: 'The host belongs to another environment',
    meaning: 'A runtime host is part of one runtime environment at a time.',
    fix: 'Name hosts that are in no other environment, or remove the host from the other one first.',
  },
  {
    code: 'runtime_environment_has_no_host',
    status: [409],
    title: 'The environment has no runtime host',
    meaning: 'A tunnel routes to the hosts of the environment, and it has none.',
    fix: 'Name the hosts with `runtime_instance_ids`.',
  },
  {
    code: 'runtime_environment_ports_differ',
    status: [409],
    title: "The environment's hosts listen on different ports",
    meaning: 'One ingress cannot reach hosts whose console router or relay ports differ.',
    fix: 'Give every host of the environment the same console router and relay ports.',
  },
  {
    code: 'tunnel_provider_change',
    status: [409],
    title: 'The tunnel has another provider',
    meaning: "The environment's tunnel is provided by another tunnel provider.",
    fix: 'Delete the tunnel before provisioning it with the other provider.',
  },
  {
    code: 'tunnel_operation_in_progress',
    status: [409],
    title: 'A tunnel operation is running',
    meaning: 'Another provisioning or deletion of this environment is running.',
    fix: 'Retry when it has ended.',
  },
  {
    code: 'tunnel_dns_record_conflict',
    status: [409],
    title: 'A DNS record is in the way',
    meaning:
      "A DNS record of the name exists and does not point at this environment's tunnel; it was left unchanged.",
    fix: 'Remove or rename the conflicting DNS record at the DNS provider, then provision again.',
  },
  {
    code: 'tunnel_provider_not_configured',
    status: [503],
    title: 'The tunnel provider is not configured',
    meaning: 'This hub has no credentials for the tunnel provider.',
    fix: "Operators: set the provider's account, zone and sealed API token settings of the hub and restart it.",
  },
  {
    code: 'tunnel_provider_error',
    status: [502],
    title: 'The tunnel provider refused',
    meaning: "The tunnel provider's API refused the operation; `provider_errors` carries its answer.",
    fix: "Correct what the provider's error names (permissions of the token, zone, quotas), then retry.",
  },
  {
    code: 'tunnel_provider_unavailable',
    status: [502],
    title: 'The tunnel provider did not answer',
    meaning: "The tunnel provider's API could not be reached.",
    fix: RETRY_SHORTLY,
  },
  {
    code: 'tunnel_delete_unconfirmed',
    status: [502],
    title: 'Tunnel deletion not confirmed',
    meaning: 'The provider accepted the deletion but the tunnel still exists.',
    fix: 'Retry the DELETE.',
  },
  {
    code: 'tunnel_ingress_invalid',
    status: [500],
    title: 'The tunnel ingress was refused locally',
    meaning: 'The hub built an ingress configuration that fails its own checks, and did not send it.',
    fix: 'Report it quoting the `request_id`; check the hosts’ public URLs and ports meanwhile.',
  },

  // Operators
  {
    code: 'operator_credential_missing',
    status: [401],
    title: 'No operator token',
    meaning: 'Operator routes (the queue dashboard) need the operator token.',
    fix: 'Send the operator token as a Bearer token, or as the password of Basic authentication.',
  },
  {
    code: 'operator_credential_invalid',
    status: [403],
    title: 'Wrong operator token',
    meaning: 'The operator token does not match the one configured.',
    fix: 'Use the current operator token of the deployment.',
  },
  {
    code: 'queue_dashboard_disabled',
    status: [404],
    title: 'The queue dashboard is off',
    meaning: 'The deployment has no operator token, so the queue dashboard is not served.',
    fix: 'Operators: set `SVC_OPERATOR_TOKEN` on the worker to turn it on.',
  },
  {
    code: 'queue_dashboard_read_only',
    status: [405],
    title: 'The queue dashboard is read-only',
    meaning: 'Changes to jobs through the dashboard are turned off.',
    fix: 'Operators: set `WORKFLOW_QUEUE_DASHBOARD_READ_ONLY=false` on the worker to allow changes.',
  },

  // Agents, messages, handoffs
  {
    code: 'agent_not_found',
    status: [404],
    title: 'No such agent',
    meaning: 'The agent id does not exist in this workspace.',
    fix: 'Check the agent id (`agt_…`) against the workspace agents list.',
  },
  {
    code: 'agent_name_taken',
    status: [409],
    title: 'Agent name already used',
    meaning: 'Agent names are unique within a workspace.',
    fix: 'Choose another name, or use the registered agent.',
  },
  {
    code: 'agent_already_running',
    status: [409],
    title: 'The agent is already running',
    meaning: 'The agent has a fresh heartbeat.',
    fix: 'Stop it before starting it again.',
  },
  {
    code: 'agent_not_running',
    status: [409],
    title: 'The agent is not running',
    meaning: 'Only a running agent renews its runtime credential.',
    fix: 'Start the agent again; it gets a new credential at start.',
  },
  {
    code: 'agent_evicted',
    status: [409],
    title: 'The agent is evicted',
    meaning: 'Eviction is final: an evicted agent cannot start or get credentials.',
    fix: 'Register a new agent.',
  },
  {
    code: 'agent_not_evicted',
    status: [409],
    title: 'Only an evicted agent can be deleted',
    meaning: 'The agent is still active.',
    fix: 'Evict it first, then delete it.',
  },
  {
    code: 'agent_referenced',
    status: [409],
    title: 'The agent is still referenced',
    meaning: 'Runs, handoffs, claims or evidence still reference the agent, so its row is kept.',
    fix: 'Leave it evicted; it is deleted once nothing references it.',
  },
  {
    code: 'project_or_workdir_required',
    status: [400],
    title: 'Give a project or a workdir',
    meaning: 'An agent works on a project or in a workdir.',
    fix: 'Send exactly one of `project_code` or `workdir`.',
  },
  {
    code: 'project_and_workdir_exclusive',
    status: [400],
    title: 'Project and workdir are exclusive',
    meaning: 'An agent works on a project or in a workdir, never both.',
    fix: 'Send only one of `project_code` or `workdir`.',
  },
  {
    code: 'worker_requires_project_and_team',
    status: [400],
    title: 'A worker needs a project and a team',
    meaning: 'A new worker agent is registered with both `project_code` and `team_id`.',
    fix: 'Send both fields.',
  },
  {
    code: 'console_route_taken',
    status: [409],
    title: 'Console route already used',
    meaning: 'Another agent on the same runtime host uses this console route.',
    fix: 'Pick another console route.',
  },
  {
    code: 'console_capacity_reached',
    status: [503],
    title: 'Console router at capacity',
    meaning:
      'The console router holds CONSOLE_ROUTER_WS_MAX_CONNECTIONS WebSockets; it refuses more before the upgrade.',
    fix: 'Retry after the Retry-After delay, or raise CONSOLE_ROUTER_WS_MAX_CONNECTIONS (and the fd limit) on the host.',
  },
  {
    code: 'websocket_limit_reached',
    status: [429],
    title: 'Too many WebSockets',
    meaning:
      'The caller (CONSOLE_ROUTER_WS_MAX_PER_CALLER) or the agent route (CONSOLE_ROUTER_WS_MAX_PER_ROUTE) has as many WebSockets open as allowed.',
    fix: 'Close a console and retry, or raise the limit on the host.',
  },
  {
    code: 'serve_port_taken',
    status: [409],
    title: 'Serve port already used',
    meaning: 'Another agent on the same runtime host uses this serve port (one port per agent).',
    fix: 'Pick a free port.',
  },
  {
    code: 'message_not_found',
    status: [404],
    title: 'No such message',
    meaning: 'The message is not in your inbox.',
    fix: 'List your inbox and use an id from it.',
  },
  {
    code: 'message_too_large',
    status: [400],
    title: 'Message too large',
    meaning: 'The message body is larger than agents may send (the detail gives the limit).',
    fix: 'Send a shorter message, or put the content in a handoff with evidence.',
  },
  {
    code: 'peer_message_forbidden',
    status: [403],
    title: 'You may not message that agent',
    meaning: 'Agents message peers they share a team or an active project assignment with.',
    fix: 'Message an agent of your team or project, or ask a participant to relay it.',
  },
  {
    code: 'handoff_not_found',
    status: [404],
    title: 'No such handoff',
    meaning: 'The handoff id does not exist in this workspace.',
    fix: 'Check the handoff id against the handoffs list.',
  },
  {
    code: 'handoff_not_assigned',
    status: [403],
    title: 'The handoff is not yours',
    meaning: 'Only the agent the handoff is assigned to may act on it.',
    fix: 'Act only on handoffs assigned to you.',
  },
  {
    code: 'handoff_invalid_transition',
    status: [409],
    title: 'The handoff cannot move that way',
    meaning:
      'The action is not allowed from the handoff’s current status (the detail gives the allowed ones).',
    fix: 'Read the handoff and choose an action its status allows.',
  },
  {
    code: 'handoff_not_in_progress',
    status: [409],
    title: 'The handoff does not take evidence now',
    meaning: 'Evidence is accepted only while the handoff is in progress.',
    fix: 'Claim or start the handoff first; a finished one takes no evidence.',
  },
  {
    code: 'handoff_conflict',
    status: [409],
    title: 'The handoff changed meanwhile',
    meaning: 'Another request changed the handoff while this one was applied.',
    fix: 'Read the handoff again and retry.',
  },
  {
    code: 'assignee_not_found',
    status: [400],
    title: 'No such assignee',
    meaning: 'The agent named as assignee does not exist in this workspace.',
    fix: 'Use the id of an agent of the workspace.',
  },
  {
    code: 'reference_kind_required',
    status: [400],
    title: 'reference_kind is missing',
    meaning: 'Filtering handoffs by `reference_id` needs `reference_kind` too.',
    fix: 'Send both query parameters.',
  },
  {
    code: 'evidence_too_large',
    status: [413],
    title: 'Evidence too large',
    meaning: 'The evidence content is larger than accepted (the detail gives the limit).',
    fix: 'Send a smaller summary and keep bulky output elsewhere, linked from the evidence.',
  },
  {
    code: 'evidence_too_deep',
    status: [400],
    title: 'Evidence nested too deeply',
    meaning: 'Evidence content may nest only a limited number of levels (the detail gives it).',
    fix: 'Flatten the evidence object.',
  },

  // Workflow contracts, templates, artifact schemas
  {
    code: 'contract_not_found',
    status: [404],
    title: 'No such workflow contract',
    meaning: 'The contract id does not exist in this project.',
    fix: "List the project's contracts and use an id from it.",
  },
  {
    code: 'classifier_empty',
    status: [400],
    title: 'Empty classifier',
    meaning:
      'A contract classifier needs at least one phrase, capability or metadata key, unless it is a fallback.',
    fix: 'Add `intentContains` phrases, `requiredCapabilities` or metadata, or send `fallback: true` with an empty classifier.',
  },
  {
    code: 'classifier_phrase_empty',
    status: [400],
    title: 'Blank classifier phrase',
    meaning: 'A phrase is empty after normalization (lower case, whitespace collapsed).',
    fix: 'Remove blank phrases.',
  },
  {
    code: 'fallback_with_criteria',
    status: [400],
    title: 'A fallback takes no criteria',
    meaning: 'A universal fallback matches any intent, so it cannot have classifier criteria.',
    fix: 'Send an empty classifier with `fallback: true`, or drop `fallback`.',
  },
  {
    code: 'template_stage_duplicate',
    status: [400],
    title: 'Duplicate stage key',
    meaning: 'Each stage key appears once in a template.',
    fix: 'Give every stage its own key.',
  },
  {
    code: 'template_version_immutable',
    status: [409],
    title: 'Template version already used',
    meaning: 'An invocation has used this template version, so it cannot change.',
    fix: 'Name a new template version for the changed template.',
  },
  {
    code: 'artifact_schema_not_found',
    status: [404],
    title: 'No such artifact schema',
    meaning: 'The artifact schema id does not exist in this workspace.',
    fix: 'List the artifact schemas and use an id from it.',
  },
  {
    code: 'artifact_schema_invalid',
    status: [400],
    title: 'Not a valid strict JSON Schema',
    meaning:
      '`json_schema` must be a strict JSON Schema (draft 2020-12); the detail names the first problem.',
    fix: 'Fix the schema at the location named in the detail; `POST …/validate` checks a payload against it.',
  },
  {
    code: 'artifact_schema_version_immutable',
    status: [409],
    title: 'Artifact schema version already registered',
    meaning: 'Versions are immutable: this name and version exist with another schema.',
    fix: 'Register the changed schema as a new version.',
  },
  {
    code: 'artifact_schema_not_registered',
    status: [409],
    title: 'The pinned artifact schema is missing',
    meaning: 'The artifact schema version the invocation pinned is not registered.',
    fix: 'Register that schema version, or fix the template to pin a registered one, then invoke again.',
  },
  {
    code: 'artifact_schema_mismatch',
    status: [422],
    title: 'The payload does not conform to the schema',
    meaning:
      'The published payload does not validate against the pinned artifact schema; it is kept as evidence, not published.',
    fix: 'Fix the producer to emit payloads that validate (`POST …/artifact-schemas/{id}/validate`), then publish again.',
  },

  // Invocations and runs
  {
    code: 'idempotency_key_required',
    status: [400],
    title: 'Idempotency-Key is missing',
    meaning: 'Creating an invocation needs an `Idempotency-Key` header.',
    fix: 'Send a stable key per logical request (1–255 printable ASCII characters); the SDK generates one when you give none.',
  },
  {
    code: 'idempotency_key_invalid',
    status: [400],
    title: 'Malformed Idempotency-Key',
    meaning: 'The key must be 1–255 printable ASCII characters.',
    fix: 'Send a shorter key of printable ASCII characters.',
  },
  {
    code: 'idempotency_conflict',
    status: [409],
    title: 'The key was used for another request',
    meaning:
      "This idempotency key (an invocation's `Idempotency-Key`, an agent spawn's `spawn_id`) was already used with a different request.",
    fix: 'Restore the original request to get what it created, or use a new key for a new request.',
  },
  {
    code: 'idempotency_key_busy',
    status: [409],
    title: 'The key is in use right now',
    meaning: 'Another request with the same key is being processed.',
    fix: 'Retry the same request shortly; it then answers the original invocation.',
  },
  {
    code: 'correlation_id_invalid',
    status: [400],
    title: 'Malformed X-Correlation-ID',
    meaning: 'The correlation id must be 1–255 printable ASCII characters.',
    fix: 'Send a shorter id of printable ASCII characters, or none.',
  },
  {
    code: 'workflow_contract_not_found',
    status: [400],
    title: 'No such active contract',
    meaning: 'The `workflow_contract_id` names no active contract of this project.',
    fix: "Use an active contract id from the project's contracts, or leave it out to resolve the intent.",
  },
  {
    code: 'workflow_template_not_found',
    status: [400],
    title: 'No contract uses the pinned template',
    meaning: 'No active contract of the project uses the pinned template key (and version).',
    fix: 'Pin a template an active contract uses, or leave the pin out.',
  },
  {
    code: 'workflow_template_key_required',
    status: [400],
    title: 'A template version needs its key',
    meaning: '`workflow_template_version` pins a version of a template named by `workflow_template_key`.',
    fix: 'Send `workflow_template_key` with the version.',
  },
  {
    code: 'workflow_template_mismatch',
    status: [400],
    title: 'The contract uses another template',
    meaning: 'The given contract does not use the pinned template key and version.',
    fix: 'Pin the template the contract uses, or drop one of the two pins.',
  },
  {
    code: 'invocation_not_found',
    status: [404],
    title: 'No such invocation',
    meaning: 'The invocation id does not exist in this project.',
    fix: 'Check the invocation id (`inv_…`) and the project; `GET …/workflow/invocations` lists them.',
  },
  {
    code: 'invocation_terminal',
    status: [409],
    title: 'The invocation has ended',
    meaning: 'The invocation is completed, failed or cancelled; nothing more can be done to it.',
    fix: 'Create a new invocation for new work.',
  },
  {
    code: 'invocation_not_retryable',
    status: [409],
    title: 'Only a failed or cancelled invocation can be retried',
    meaning:
      'A retry starts a new invocation from the request of one that ended without a result; this one is still under way or completed.',
    fix: 'Wait until it fails or cancel it first; a completed invocation is invoked again with a new Idempotency-Key.',
  },
  {
    code: 'invocation_not_launched',
    status: [409],
    title: 'The invocation has no run yet',
    meaning: 'An artifact is published for a launched invocation.',
    fix: 'Launch the invocation first.',
  },
  {
    code: 'launch_blocked',
    status: [409],
    title: 'The invocation cannot launch',
    meaning:
      'Configuration refuses the launch; `blockers` lists each blocker with its `recommended_action` (the same blockers preflight reports).',
    fix: 'Apply the recommended action of each blocker (contract, template or artifact schema), then launch again.',
  },
  {
    code: 'approval_not_pending',
    status: [409],
    title: 'No approval is pending',
    meaning: 'The invocation was already approved or rejected, or it is not waiting for approval.',
    fix: 'Read the invocation; decide only runs in `awaiting_approval`.',
  },
  {
    code: 'artifact_not_found',
    status: [404],
    title: 'No artifact yet',
    meaning: 'No artifact is published for this invocation yet.',
    fix: 'Poll the invocation until it is `completed` (bounded by your timeout), or subscribe to deliveries.',
  },
  {
    code: 'artifact_already_published',
    status: [409],
    title: 'The artifact is already published',
    meaning: 'An invocation has one artifact; envelopes are immutable.',
    fix: 'Read the published artifact instead.',
  },
  {
    code: 'stage_not_found',
    status: [404],
    title: 'No such stage',
    meaning: 'The stage id does not exist in your workspace.',
    fix: 'Use a stage id from your assignments (`GET /api/v1/agents/me/workflow-stages`).',
  },
  {
    code: 'stage_not_owned',
    status: [403],
    title: 'The stage is not yours',
    meaning: 'Only the agent that owns the stage may act on it (or publish its invocation’s artifact).',
    fix: 'Act only on stages assigned to your agent.',
  },
  {
    code: 'stage_not_open',
    status: [409],
    title: 'The stage is not open',
    meaning: 'The stage is not in a state that takes this action (the detail gives its state).',
    fix: 'Read your assignments again and act on open stages only.',
  },
  {
    code: 'stage_completed',
    status: [409],
    title: 'The stage is already completed',
    meaning: 'A completed stage takes no further action.',
    fix: 'Nothing to do; continue with your next assignment.',
  },
  {
    code: 'stage_reassigned',
    status: [409],
    title: 'The stage was reassigned',
    meaning: 'Your agent stopped heartbeating the stage and it went to another agent.',
    fix: 'Drop the stage and heartbeat your stages more often than the stall timeout.',
  },

  // Deliveries
  {
    code: 'delivery_subscription_not_found',
    status: [404],
    title: 'No such delivery subscription',
    meaning: 'The subscription id does not exist in this project.',
    fix: "List the project's delivery subscriptions and use an id from it.",
  },
  {
    code: 'delivery_not_found',
    status: [404],
    title: 'No such delivery',
    meaning: 'The delivery id does not exist in this project.',
    fix: "List the project's deliveries and use an id from it.",
  },
  {
    code: 'subscription_disabled',
    status: [409],
    title: 'The subscription is disabled',
    meaning: 'A disabled or deleted subscription sends nothing.',
    fix: 'Enable the subscription (`is_active: true`) before redelivering.',
  },
  {
    code: 'delivery_not_configured',
    status: [503],
    title: 'Signed delivery is not configured',
    meaning: 'The deployment has no key to seal signing secrets, so it cannot create or use subscriptions.',
    fix: 'Operators: set the Workflow API encryption keys (`WORKFLOW_ENCRYPTION_KEYS`) and restart.',
  },
  {
    code: 'url_invalid',
    status: [400],
    title: 'Invalid delivery URL',
    meaning: 'The delivery URL is not a valid absolute URL of acceptable length.',
    fix: 'Send an absolute https URL of your receiver.',
  },
  {
    code: 'url_scheme_not_allowed',
    status: [400],
    title: 'The delivery URL must use https',
    meaning: 'Deliveries go to https receivers only.',
    fix: 'Serve your receiver over https and subscribe that URL.',
  },
  {
    code: 'url_credentials_not_allowed',
    status: [400],
    title: 'Credentials in the delivery URL',
    meaning:
      'A delivery URL must not contain a user name or password; deliveries are authenticated by their signature.',
    fix: 'Remove the credentials from the URL and verify the signature in your receiver.',
  },
  {
    code: 'url_host_not_allowed',
    status: [400],
    title: 'Delivery host not allowed',
    meaning:
      'The host of the delivery URL is a reserved name (`localhost`, `*.internal`, cloud metadata names).',
    fix: 'Use the public DNS name of your receiver.',
  },
  {
    code: 'url_resolves_to_forbidden_address',
    status: [400],
    title: 'Delivery host resolves to a private address',
    meaning: 'The host resolves to a private, loopback, link-local or reserved address.',
    fix: 'Use a publicly reachable receiver (the development stack allows loopback receivers).',
  },
  {
    code: 'url_unresolvable',
    status: [400],
    title: 'Delivery host does not resolve',
    meaning: 'The host of the delivery URL could not be resolved to a usable address.',
    fix: 'Check the host name and its DNS records.',
  },
];

const BY_CODE = new Map(PROBLEM_CODES.map((doc) => [doc.code, doc]));

/** The documentation of a problem code, or undefined for a code that is not in the registry. */
export function problemCodeDoc(code: string): ProblemCodeDoc | undefined {
  return BY_CODE.get(code);
}
