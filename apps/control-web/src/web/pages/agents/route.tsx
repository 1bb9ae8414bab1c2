import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { AgentDetailPage } from './AgentDetailPage';
import { AgentsPage } from './AgentsPage';

export const routes: PageRoute[] = [
  {
    path: 'agents',
    title: 'Agents',
    roles: ALL_ROLES,
    nav: { label: 'Agents', order: 20 },
    element: <AgentsPage />,
  },
  { path: 'agents/:agentId', title: 'Agent', roles: ALL_ROLES, element: <AgentDetailPage /> },
];
