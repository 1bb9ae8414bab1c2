import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * Runs axe-core (WCAG 2.1 A/AA) on the page as it is, limited to `selector` when given (an open dialog), and
 * returns its serious and critical violations, one line per node. The page must allow the injected script
 * (`openPage(browser, { bypassCSP: true })`). Also returns how many checks passed: a run that checked nothing
 * proves nothing.
 */
export async function axeViolations(
  page: Page,
  selector?: string,
): Promise<{ serious: string[]; passed: number }> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.addScriptTag({ content: AXE_SOURCE });
  const context = selector ? JSON.stringify(selector) : 'document';
  const result = await page.evaluate<{ violations: unknown; passed: number }>(
    `axe.run(${context}, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} } })
      .then((results) => ({ violations: results.violations, passed: results.passes.length }))`,
  );
  const serious = (result.violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) =>
      v.nodes.map(
        (node) =>
          `${v.id} (${v.impact}) at ${JSON.stringify(node.target)}: ${v.help} — ${node.failureSummary ?? ''}`,
      ),
    );
  return { serious, passed: result.passed };
}

/** How far the page is wider than the viewport (0: no sideways scrolling). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>(
    'Math.max(0, (document.scrollingElement || document.documentElement).scrollWidth - window.innerWidth)',
  );
}
