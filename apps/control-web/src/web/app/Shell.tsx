import { useEffect, useMemo, useState } from 'react';
import { Link, NavLink, Navigate, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import type { HubMe } from '@svc/sdk';
import { ProblemMessage } from '../components/ProblemMessage';
import { NamesProvider } from './names';
import { roleAllows } from './roles';
import { navRoutes } from './routes';
import { useSession } from './session';
import { WorkspaceContext } from './workspace';
import type { CurrentWorkspace } from './workspace';

/**
 * The signed-in layout of `/w/:workspace/…`: a skip link, the header (app name, workspace switcher, the
 * participant, sign out), the navigation the participant's role allows, and the page.
 */
export function Shell({ me }: { me: HubMe }) {
  const { workspace: slug } = useParams();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  // A page opened from the navigation closes it (on small screens it covers the page).
  useEffect(() => setMenuOpen(false), [location.pathname]);
  const membership = me.memberships.find((m) => m.workspace.slug === slug || m.workspace.id === slug);
  const current = useMemo<CurrentWorkspace | undefined>(
    () => (membership ? { workspace: membership.workspace, role: membership.role } : undefined),
    [membership],
  );
  if (!current) {
    const first = me.memberships[0];
    if (first) return <Navigate to={`/w/${first.workspace.slug}`} replace />;
    return <NoWorkspace />;
  }
  const base = `/w/${current.workspace.slug}`;
  return (
    <WorkspaceContext.Provider value={current}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          <span className="menu-icon" aria-hidden="true" />
          Menu
        </button>
        <Link to={base} className="brand">
          Control
        </Link>
        <WorkspaceSwitcher me={me} current={current} />
        <SearchBox base={base} />
        <UserMenu name={me.participant.display_name || me.participant.email} role={current.role} />
      </header>
      <div className="app-body">
        <nav id="main-nav" className={menuOpen ? 'app-nav open' : 'app-nav'} aria-label="Main">
          <ul>
            {navRoutes
              .filter((route) => roleAllows(current.role, route.roles))
              .map((route) => (
                <li
                  key={route.path}
                  className={route.nav?.section === 'settings' ? 'nav-settings' : undefined}
                >
                  <NavLink to={route.path ? `${base}/${route.path}` : base} end={route.path === ''}>
                    {route.nav!.label}
                  </NavLink>
                </li>
              ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1} className="app-main">
          <NamesProvider>
            <Outlet />
          </NamesProvider>
        </main>
      </div>
    </WorkspaceContext.Provider>
  );
}

/** Search by id or name across the workspace; the results are a page of their own (`…/search?q=`). */
function SearchBox({ base }: { base: string }) {
  const navigate = useNavigate();
  const location = useLocation();
  const current = location.pathname.endsWith('/search')
    ? (new URLSearchParams(location.search).get('q') ?? '')
    : '';
  const [value, setValue] = useState(current);
  useEffect(() => setValue(current), [current]);
  return (
    <form
      role="search"
      className="search-box"
      onSubmit={(event) => {
        event.preventDefault();
        const q = value.trim();
        if (q) void navigate(`${base}/search?q=${encodeURIComponent(q)}`);
      }}
    >
      <label htmlFor="global-search" className="visually-hidden">
        Search by id or name
      </label>
      <input
        id="global-search"
        type="search"
        placeholder="Search by id or name"
        value={value}
        maxLength={200}
        onChange={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit">Search</button>
    </form>
  );
}

/** A disclosure listing the participant's workspaces; choosing one opens the same page there. */
function WorkspaceSwitcher({ me, current }: { me: HubMe; current: CurrentWorkspace }) {
  const location = useLocation();
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [location.pathname]);
  const rest = location.pathname.split('/').slice(3).join('/');
  return (
    <details className="switcher" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary aria-label={`Workspace: ${current.workspace.name}. Switch workspace`}>
        <span className="switcher-label">Workspace</span> {current.workspace.name}
      </summary>
      <ul className="switcher-list">
        {me.memberships.map((m) => (
          <li key={m.workspace.id}>
            <Link
              to={`/w/${m.workspace.slug}${rest ? `/${rest}` : ''}`}
              aria-current={m.workspace.id === current.workspace.id ? 'true' : undefined}
            >
              {m.workspace.name}{' '}
              <span className="muted">
                ({m.workspace.slug}, {m.role})
              </span>
            </Link>
          </li>
        ))}
      </ul>
    </details>
  );
}

function UserMenu({ name, role }: { name: string; role: string }) {
  const { signOut } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(undefined);
  return (
    <div className="user">
      <span className="user-name">
        <span className="user-name-text">{name}</span> <span className="role-badge">{role}</span>
      </span>
      <button
        type="button"
        onClick={() =>
          void signOut()
            .then(() => navigate('/sign-in', { replace: true }))
            .catch(setError)
        }
      >
        Sign out
      </button>
      <ProblemMessage error={error} context="Sign out failed" />
    </div>
  );
}

function NoWorkspace() {
  return (
    <main id="main" className="app-main narrow">
      <h1>No workspace</h1>
      <p>You are signed in but not a member of any workspace. Ask a workspace owner or admin to add you.</p>
    </main>
  );
}
