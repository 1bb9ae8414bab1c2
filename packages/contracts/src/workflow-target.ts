/** The invocation a call is about (not exported from the package: each helper names its own options). */
export interface InvocationTarget {
  projectId: string;
  invocationId: string;
  signal?: AbortSignal;
}

export function invocationPath(options: InvocationTarget) {
  return { path: { projectId: options.projectId, invocationId: options.invocationId } };
}
