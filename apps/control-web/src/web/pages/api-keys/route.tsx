import type { PageRoute } from '../../app/page-route';
import { MANAGERS } from '../../app/roles';
import { Placeholder } from '../../components/Placeholder';

// Placeholder until this page is built: replace this file's route with the real page.
export const routes: PageRoute[] = [
  {
    path: 'settings/api-keys',
    title: 'API keys',
    roles: MANAGERS,
    nav: { label: 'API keys', order: 90, section: 'settings' },
    element: <Placeholder title="API keys" about="Create, copy once, and revoke the workspace's API keys." />,
  },
];
