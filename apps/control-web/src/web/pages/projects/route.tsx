import { Suspense, lazy } from 'react';
import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
import type { PageRoute } from '../../app/page-route';
import { ALL_ROLES } from '../../app/roles';
import { ContractsPage } from './contracts/ContractsPage';
import { InvocationPage } from './invocations/InvocationPage';
import { InvocationsPage } from './invocations/InvocationsPage';
import { TryIntentPage } from './intent/TryIntentPage';
import { Loading } from '../../components/Loading';

// The contract and schema editors check input against the Workflow API's own document, which is large: they
// load with their page, not with the app.
const ContractEditPage = lazy(() =>
  import('./contracts/ContractEditPage').then((m) => ({ default: m.ContractEditPage })),
);
const ArtifactSchemasPage = lazy(() =>
  import('./schemas/ArtifactSchemasPage').then((m) => ({ default: m.ArtifactSchemasPage })),
);
// Deliveries are an operator's page, opened far less often than the rest: it loads with its page too.
const DeliveriesPage = lazy(() =>
  import('./deliveries/DeliveriesPage').then((m) => ({ default: m.DeliveriesPage })),
);
// The projects list carries the dialogs that create, rename, archive and staff projects.
const ProjectsPage = lazy(() => import('./ProjectsPage').then((m) => ({ default: m.ProjectsPage })));
// Run limits are set once in a while, by owners and admins.
const RunLimitsPage = lazy(() =>
  import('./limits/RunLimitsPage').then((m) => ({ default: m.RunLimitsPage })),
);
const loaded = (page: ReactNode) => <Suspense fallback={<Loading />}>{page}</Suspense>;

// Every member reads a project's workflow; the Workflow API lets owner, admin and member change it
// (`x-svc-participant-roles`), and each page offers its actions to those roles only.
export const routes: PageRoute[] = [
  {
    path: 'projects',
    title: 'Projects',
    roles: ALL_ROLES,
    nav: { label: 'Projects', order: 30 },
    element: loaded(<ProjectsPage />),
  },
  // A project opens on its contracts.
  {
    path: 'projects/:projectId',
    title: 'Contracts',
    roles: ALL_ROLES,
    element: <Navigate to="contracts" replace />,
  },
  { path: 'projects/:projectId/contracts', title: 'Contracts', roles: ALL_ROLES, element: <ContractsPage /> },
  {
    path: 'projects/:projectId/contracts/new',
    title: 'New contract',
    roles: ALL_ROLES,
    element: loaded(<ContractEditPage />),
  },
  {
    path: 'projects/:projectId/contracts/:contractId',
    title: 'Contract',
    roles: ALL_ROLES,
    element: loaded(<ContractEditPage />),
  },
  {
    path: 'projects/:projectId/intent',
    title: 'Try an intent',
    roles: ALL_ROLES,
    element: <TryIntentPage />,
  },
  {
    path: 'projects/:projectId/schemas',
    title: 'Artifact schemas',
    roles: ALL_ROLES,
    element: loaded(<ArtifactSchemasPage />),
  },
  {
    path: 'projects/:projectId/invocations',
    title: 'Invocations',
    roles: ALL_ROLES,
    element: <InvocationsPage />,
  },
  {
    path: 'projects/:projectId/deliveries',
    title: 'Deliveries',
    roles: ALL_ROLES,
    element: loaded(<DeliveriesPage />),
  },
  {
    path: 'projects/:projectId/run-limits',
    title: 'Run limits',
    roles: ALL_ROLES,
    element: loaded(<RunLimitsPage />),
  },
  {
    path: 'projects/:projectId/invocations/:invocationId',
    title: 'Invocation',
    roles: ALL_ROLES,
    element: <InvocationPage />,
  },
];
