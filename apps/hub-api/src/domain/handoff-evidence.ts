/** Largest evidence content, measured as UTF-8 JSON. */
export const MAX_EVIDENCE_BYTES = 64 * 1024;
/** Deepest nesting of objects and arrays in evidence content. */
export const MAX_EVIDENCE_DEPTH = 32;

/** Nesting depth of a parsed JSON value (a scalar is 0, `{}` is 1), walked without recursion. */
export function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, level]);
  }
  return deepest;
}

/** Evidence kind under which a completion summary is kept. */
export const COMPLETION_SUMMARY_KIND = 'completion_summary';
