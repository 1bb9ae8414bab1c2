import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { SearchPage } from './SearchPage';

// Reached from the search box in the header; every role searches what it may read.
export const routes: PageRoute[] = [
  { path: 'search', title: 'Search', roles: ALL_ROLES, element: <SearchPage /> },
];
