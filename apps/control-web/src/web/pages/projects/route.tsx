import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { Placeholder } from '../../components/Placeholder';

// Placeholder until this page is built: replace this file's route with the real page.
export const routes: PageRoute[] = [
  {
    path: 'projects',
    title: 'Projects',
    roles: ALL_ROLES,
    nav: { label: 'Projects', order: 30 },
    element: (
      <Placeholder
        title="Projects"
        about="Projects and their workflow: contracts, intents, artifact schemas, invocations and deliveries."
      />
    ),
  },
];
