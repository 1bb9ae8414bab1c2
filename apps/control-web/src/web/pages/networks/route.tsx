import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { Placeholder } from '../../components/Placeholder';

// Placeholder until this page is built: replace this file's route with the real page.
export const routes: PageRoute[] = [
  {
    path: 'networks',
    title: 'Networks',
    roles: ALL_ROLES,
    nav: { label: 'Networks', order: 10 },
    element: (
      <Placeholder
        title="Networks"
        about="Runtime hosts, spawn readiness, heartbeats, running agents and tunnels, live."
      />
    ),
  },
];
