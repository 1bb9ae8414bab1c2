import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { NetworksPage } from './NetworksPage';

export const routes: PageRoute[] = [
  {
    path: 'networks',
    title: 'Networks',
    roles: ALL_ROLES,
    nav: { label: 'Networks', order: 10 },
    element: <NetworksPage />,
  },
];
