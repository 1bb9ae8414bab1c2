import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { SpawnPolicyPage } from './SpawnPolicyPage';

export const routes: PageRoute[] = [
  {
    path: 'settings/spawn-policy',
    title: 'Spawn policy',
    roles: ALL_ROLES,
    nav: { label: 'Spawn policy', order: 95, section: 'settings' },
    element: <SpawnPolicyPage />,
  },
];
