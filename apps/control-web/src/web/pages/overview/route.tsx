import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { OverviewPage } from './OverviewPage';

export const routes: PageRoute[] = [
  {
    path: '',
    title: 'Overview',
    roles: ALL_ROLES,
    nav: { label: 'Overview', order: 0 },
    element: <OverviewPage />,
  },
];
