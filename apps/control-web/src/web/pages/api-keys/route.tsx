import type { PageRoute } from '../../app/page-route';
import { MANAGERS } from '../../app/roles';
import { ApiKeysPage } from './ApiKeysPage';

export const routes: PageRoute[] = [
  {
    path: 'settings/api-keys',
    title: 'API keys',
    roles: MANAGERS,
    nav: { label: 'API keys', order: 90, section: 'settings' },
    element: <ApiKeysPage />,
  },
];
