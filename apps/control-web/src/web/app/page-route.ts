import type { ReactNode } from 'react';
import type { WorkspaceRole } from './roles';

/**
 * One page of the signed-in app. A page folder `pages/<name>/` exports `routes: PageRoute[]` from its
 * `route.tsx`; the route table (`app/routes.ts`) picks every such file up, so adding a page is adding files.
 */
export interface PageRoute {
  /** Path below `/w/:workspace/` (`keys`, `agents/:agentId`); `''` is the workspace's home page. */
  path: string;
  /** Page title (the document title and, by convention, the page's `<h1>`). */
  title: string;
  /** Roles that may open the page; others see "not available for your role" and no navigation entry. */
  roles: readonly WorkspaceRole[];
  /** Shown in the main navigation when set; entries sort by `order`, then label. */
  nav?: { label: string; order: number; section?: 'workspace' | 'settings' };
  element: ReactNode;
}
