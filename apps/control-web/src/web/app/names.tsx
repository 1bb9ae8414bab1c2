import { createContext, useContext, useMemo } from 'react';
import type { ReactNode } from 'react';
import { unwrap } from './api';
import { useApi } from './hooks';
import { MANAGERS, roleAllows } from './roles';
import { useClients } from './session';
import { useWorkspace } from './workspace';

/** What an id names in the workspace: a person, an API key, an agent, a project or a team. */
export interface Named {
  name: string;
  kind: 'participant' | 'api_key' | 'agent' | 'project' | 'team';
}

const NamesContext = createContext<ReadonlyMap<string, Named>>(new Map());

/**
 * Reads the workspace's people, agents, projects and teams (and, for owners and admins, its API keys, revoked
 * ones too) once, so pages can show names where the APIs answer ids. A list the role may not read, or one
 * that fails, simply names nothing: the id is shown instead.
 */
export function NamesProvider({ children }: { children: ReactNode }) {
  const { workspace, role } = useWorkspace();
  const { hub } = useClients();
  const canListKeys = roleAllows(role, MANAGERS);
  const names = useApi(
    async (signal) => {
      const path = { params: { path: { workspace: workspace.id } }, signal };
      const quietly = <T,>(promise: Promise<T>): Promise<T | undefined> => promise.catch(() => undefined);
      const [members, agents, projects, teams, keys] = await Promise.all([
        quietly(hub.raw.GET('/api/v1/workspaces/{workspace}/members', path).then(unwrap)),
        quietly(hub.raw.GET('/api/v1/workspaces/{workspace}/agents', path).then(unwrap)),
        quietly(
          hub.raw
            .GET('/api/v1/workspaces/{workspace}/projects', {
              params: { path: { workspace: workspace.id }, query: { include_archived: true } },
              signal,
            })
            .then(unwrap),
        ),
        quietly(hub.raw.GET('/api/v1/workspaces/{workspace}/teams', path).then(unwrap)),
        canListKeys
          ? quietly(
              hub.raw
                .GET('/api/v1/workspaces/{workspace}/api-keys', {
                  params: { path: { workspace: workspace.id }, query: { include_revoked: true } },
                  signal,
                })
                .then(unwrap),
            )
          : Promise.resolve(undefined),
      ]);
      const map = new Map<string, Named>();
      for (const m of members ?? [])
        map.set(m.participant.id, {
          name: m.participant.display_name || m.participant.email,
          kind: 'participant',
        });
      for (const a of agents ?? []) map.set(a.id, { name: a.name, kind: 'agent' });
      for (const p of projects ?? []) map.set(p.id, { name: `${p.name} (${p.code})`, kind: 'project' });
      for (const t of teams ?? []) map.set(t.id, { name: t.name, kind: 'team' });
      for (const k of keys ?? []) map.set(k.id, { name: k.name, kind: 'api_key' });
      return map;
    },
    [workspace.id, canListKeys],
  );
  const value = useMemo(() => names.data ?? new Map<string, Named>(), [names.data]);
  return <NamesContext.Provider value={value}>{children}</NamesContext.Provider>;
}

/** The name of `id` in the workspace, when it names something the page could read. */
export function useNameOf(): (id: string | null | undefined) => Named | undefined {
  const names = useContext(NamesContext);
  return (id) => (id ? names.get(id) : undefined);
}

/**
 * An id shown by its name, the id on hover (and for screen readers, after the name); an id the workspace
 * does not name is shown as it is.
 */
export function NameOf({ id, fallback }: { id: string | null | undefined; fallback?: string }) {
  const nameOf = useNameOf();
  if (!id) return <>{fallback ?? '—'}</>;
  const named = nameOf(id);
  if (!named) return <code className="id">{fallback ?? id}</code>;
  return (
    <span className="named" title={id}>
      {named.name}
    </span>
  );
}
