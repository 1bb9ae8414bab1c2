import type { PageRoute } from '../../app/page-route';
import { MANAGERS } from '../../app/roles';
import { Placeholder } from '../../components/Placeholder';

// Placeholder until this page is built: replace this file's route with the real page.
export const routes: PageRoute[] = [
  {
    path: 'audit',
    title: 'Audit log',
    roles: MANAGERS,
    nav: { label: 'Audit log', order: 40 },
    element: <Placeholder title="Audit log" about="The workspace's audit events with filters." />,
  },
];
