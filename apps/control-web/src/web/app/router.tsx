import { useEffect } from 'react';
import type { ReactNode } from 'react';
import { createBrowserRouter, Navigate, useLocation } from 'react-router';
import { Loading } from '../components/Loading';
import { ProblemMessage } from '../components/ProblemMessage';
import { SignInPage } from '../pages/sign-in/SignInPage';
import type { PageRoute } from './page-route';
import { roleAllows } from './roles';
import { pageRoutes } from './routes';
import { useSession } from './session';
import { Shell } from './Shell';
import { useWorkspace } from './workspace';

/** Renders `children(me)` when signed in; otherwise sends the visitor to sign in and back here afterwards. */
function SignedIn({
  children,
}: {
  children: (me: Extract<ReturnType<typeof useSession>['state'], { status: 'signed-in' }>['me']) => ReactNode;
}) {
  const { state } = useSession();
  const location = useLocation();
  if (state.status === 'loading') return <Loading what="Checking your session" />;
  if (state.status === 'error')
    return <ProblemMessage error={state.error} context="Your session could not be checked" />;
  if (state.status === 'signed-out') {
    const next = encodeURIComponent(`${location.pathname}${location.search}`);
    const reason = state.reason === 'expired' ? '&expired=1' : '';
    return <Navigate to={`/sign-in?next=${next}${reason}`} replace />;
  }
  return <>{children(state.me)}</>;
}

/** The page of one route, or a refusal for a role it is not offered to; sets the document title. */
function Page({ route }: { route: PageRoute }) {
  const { workspace, role } = useWorkspace();
  useEffect(() => {
    document.title = `${route.title} · ${workspace.name} · Control`;
  }, [route.title, workspace.name]);
  if (!roleAllows(role, route.roles)) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{route.title}</h1>
        <p>This page is not available to your role ({role}) in this workspace.</p>
      </section>
    );
  }
  return <>{route.element}</>;
}

function NotFound() {
  return (
    <main id="main" className="app-main narrow">
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <a href="/">Go to your workspace</a>.
      </p>
    </main>
  );
}

export function createAppRouter() {
  return createBrowserRouter([
    { path: '/sign-in', element: <SignInPage /> },
    {
      path: '/',
      element: (
        <SignedIn>
          {(me) => {
            const first = me.memberships[0];
            return <Navigate to={first ? `/w/${first.workspace.slug}` : '/w/-'} replace />;
          }}
        </SignedIn>
      ),
    },
    {
      path: '/w/:workspace',
      element: <SignedIn>{(me) => <Shell me={me} />}</SignedIn>,
      children: pageRoutes.map((route) =>
        route.path === ''
          ? { index: true, element: <Page route={route} /> }
          : { path: route.path, element: <Page route={route} /> },
      ),
    },
    { path: '*', element: <NotFound /> },
  ]);
}
