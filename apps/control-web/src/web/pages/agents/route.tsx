import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { Placeholder } from '../../components/Placeholder';

// Placeholder until this page is built: replace this file's route with the real page.
export const routes: PageRoute[] = [
  {
    path: 'agents',
    title: 'Agents',
    roles: ALL_ROLES,
    nav: { label: 'Agents', order: 20 },
    element: (
      <Placeholder
        title="Agents"
        about="Agents: spawn, stop, evict, and the console with health, chat and terminal."
      />
    ),
  },
];
