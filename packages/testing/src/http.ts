/**
 * POSTs `body` as JSON and resolves to the answer's `data`; any status other than 2xx fails with the path,
 * the status and the problem's `code`.
 */
export async function postJson<T = unknown>(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { data?: T; code?: string };
  if (!res.ok) throw new Error(`POST ${new URL(url).pathname}: ${res.status} ${json.code ?? ''}`);
  return json.data as T;
}
