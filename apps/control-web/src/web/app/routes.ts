import type { PageRoute } from './page-route';

/**
 * The route table of the signed-in app: every `pages/<name>/route.tsx` registers its pages by exporting
 * `routes`. Vite collects the files at build time; nothing here changes when a page is added.
 */
const modules = import.meta.glob<{ routes: PageRoute[] }>('../pages/*/route.tsx', { eager: true });

export const pageRoutes: PageRoute[] = Object.keys(modules)
  .sort()
  .flatMap((file) => modules[file]?.routes ?? []);

/** Navigation entries in display order. */
export const navRoutes = pageRoutes
  .filter((route) => route.nav !== undefined)
  .sort((a, b) => a.nav!.order - b.nav!.order || a.nav!.label.localeCompare(b.nav!.label));

/** Duplicate paths are a mistake of two page folders; fail loudly in development and tests. */
const seen = new Set<string>();
for (const route of pageRoutes) {
  if (seen.has(route.path)) throw new Error(`two pages register the path "${route.path}"`);
  seen.add(route.path);
}
