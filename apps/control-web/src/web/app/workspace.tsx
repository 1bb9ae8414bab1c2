import { createContext, useContext } from 'react';
import type { HubApi } from '@svc/sdk';
import type { WorkspaceRole } from './roles';

export type Workspace = HubApi.components['schemas']['Workspace'];

export interface CurrentWorkspace {
  workspace: Workspace;
  /** The signed-in participant's role in it. */
  role: WorkspaceRole;
}

export const WorkspaceContext = createContext<CurrentWorkspace | undefined>(undefined);

/** The workspace of the current page (`/w/:workspace/…`) and the participant's role in it. */
export function useWorkspace(): CurrentWorkspace {
  const value = useContext(WorkspaceContext);
  if (!value) throw new Error('useWorkspace must be used on a workspace page');
  return value;
}
