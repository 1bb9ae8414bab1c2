const BUNDLE_ID = /^wrt_[A-Za-z0-9]{1,60}$/;

/** What a runtime bundle's `runtime.env` carries, as far as `runtime up` uses it. Its bundle id is never a host id. */
export interface BundleFacts {
  path: string;
  bundle_id: string | null;
  hub_url: string | null;
  workspace: string | null;
  workspace_api_key: string | null;
  relay_token: string | null;
}

/** Reads the facts of a parsed `runtime.env`; values may be quoted, names with or without the `SVC_` prefix. */
export function bundleFacts(file: string, values: Record<string, string>): BundleFacts {
  const first = (...keys: string[]) => {
    for (const key of keys) if (values[key]) return values[key]!;
    return null;
  };
  const idKeys = [
    'SVC_RUNTIME_BUNDLE_ID',
    'RUNTIME_BUNDLE_ID',
    'SVC_BUNDLE_ID',
    'BUNDLE_ID',
    'SVC_RUNTIME_INSTANCE_ID',
    'RUNTIME_INSTANCE_ID',
    'RUNTIME_ID',
  ];
  const bundleId = idKeys.map((k) => values[k]).find((v): v is string => !!v && BUNDLE_ID.test(v)) ?? null;
  return {
    path: file,
    bundle_id: bundleId,
    hub_url: first('SVC_HUB_URL', 'HUB_URL'),
    workspace: first('SVC_WORKSPACE', 'WORKSPACE', 'SVC_WORKSPACE_SLUG'),
    workspace_api_key: first('SVC_WORKSPACE_API_KEY', 'WORKSPACE_API_KEY'),
    relay_token: first('SVC_RELAY_TOKEN', 'RELAY_TOKEN'),
  };
}
