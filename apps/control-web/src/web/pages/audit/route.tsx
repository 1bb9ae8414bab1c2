import type { PageRoute } from '../../app/page-route';
import { MANAGERS } from '../../app/roles';
import { AuditPage } from './AuditPage';

export const routes: PageRoute[] = [
  {
    path: 'audit',
    title: 'Audit log',
    roles: MANAGERS,
    nav: { label: 'Audit log', order: 40 },
    element: <AuditPage />,
  },
];
