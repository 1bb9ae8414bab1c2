import { Suspense, lazy } from 'react';
import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { Loading } from '../../components/Loading';

// Search loads with its page: the app's first visit stays small.
const SearchPage = lazy(() => import('./SearchPage').then((m) => ({ default: m.SearchPage })));

// Reached from the search box in the header; every role searches what it may read.
export const routes: PageRoute[] = [
  {
    path: 'search',
    title: 'Search',
    roles: ALL_ROLES,
    element: (
      <Suspense fallback={<Loading />}>
        <SearchPage />
      </Suspense>
    ),
  },
];
