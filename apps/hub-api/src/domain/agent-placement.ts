import path from 'node:path';
import { AppError } from '@svc/service-kit';

const WINDOWS_ROOT = /^(?:[A-Za-z]:[\\/]|\\\\)/;

const outsideRoot = (detail: string, workdirRoot: string) =>
  new AppError({
    status: 400,
    code: 'workdir_outside_root',
    detail,
    extra: { field: 'workdir', workdir_root: workdirRoot },
  });

/**
 * Checks that a workdir is an absolute path strictly inside the host's `workdir_root` (after resolving `.`
 * and `..`) and returns it normalized. The root decides the path flavour: a Windows root (`C:\…`) compares
 * Windows paths case-insensitively, any other root POSIX paths.
 */
export function workdirUnderRoot(workdir: string, workdirRoot: string): string {
  const flavour = WINDOWS_ROOT.test(workdirRoot) ? path.win32 : path.posix;
  if (workdir.includes('\0') || !flavour.isAbsolute(workdir)) {
    throw outsideRoot(
      `workdir '${workdir}' is not an absolute path; use a directory inside the host's workdir_root '${workdirRoot}'.`,
      workdirRoot,
    );
  }
  const trim = (p: string) => {
    const normalized = flavour.normalize(p);
    const stripped = normalized.replace(/[\\/]+$/, '');
    return stripped === '' || /^[A-Za-z]:$/.test(stripped) ? normalized : stripped;
  };
  const root = trim(workdirRoot);
  const dir = trim(workdir);
  const fold = (p: string) => (flavour === path.win32 ? p.toLowerCase() : p);
  const relative = flavour.relative(fold(root), fold(dir));
  if (relative === '' || relative.startsWith('..') || flavour.isAbsolute(relative)) {
    throw outsideRoot(
      `workdir '${workdir}' is not inside the host's workdir_root '${workdirRoot}'; use a directory under it.`,
      workdirRoot,
    );
  }
  return dir;
}

/** Whether a stored workdir is still inside a host's workdir root (the root may have changed since). */
export function isWorkdirUnderRoot(workdir: string, workdirRoot: string): boolean {
  try {
    workdirUnderRoot(workdir, workdirRoot);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/** Capabilities as stored: without duplicates, sorted. */
export function normalizeCapabilities(capabilities: readonly string[] | undefined): string[] {
  return [...new Set(capabilities ?? [])].sort();
}

/** The console route an agent gets unless it names one: `/<workspace-slug>/agents/<agent-id>`. */
export function defaultConsoleRoute(workspaceSlug: string, agentId: string): string {
  return `/${workspaceSlug}/agents/${agentId}`;
}
