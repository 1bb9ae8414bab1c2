import { createHash } from 'node:crypto';
import { canonicalJson, invocationFingerprint, normalizeIntent, normalizeInvocationRequest } from './index';

describe('canonicalJson', () => {
  test('when keys come in another order at any depth, then the text is the same', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } };
    const b = { a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
  });

  test('when array order differs, then the text differs; undefined members are left out', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });

  test('when strings hold unicode, quotes or control characters, then they are escaped as JSON.stringify does', () => {
    expect(canonicalJson({ 'é"': 'line\nbreak ☃' })).toBe('{"é\\"":"line\\nbreak ☃"}');
  });
});

describe('invocationFingerprint', () => {
  test('when an intent differs only in case, width or whitespace, then it normalizes alike', () => {
    expect(normalizeIntent('  Ｒｅｆｕｎｄ\tthe   ORDER\n')).toBe('refund the order');
  });

  test('when capabilities repeat or come in another order, then the fingerprint is the same', () => {
    const a = invocationFingerprint({ intent: 'Ship it', required_capabilities: ['b', 'a', 'b'] });
    const b = invocationFingerprint({ intent: 'ship  it', required_capabilities: ['a', 'b'] });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when optional fields are absent or capabilities empty, then they are left out of the request', () => {
    expect(normalizeInvocationRequest({ intent: 'X', required_capabilities: [] })).toEqual({ intent: 'x' });
    expect(invocationFingerprint({ intent: 'x', required_capabilities: [] })).toBe(
      createHash('sha256').update('{"intent":"x"}').digest('hex'),
    );
  });

  test('when metadata or a pinned contract differs, then the fingerprint differs', () => {
    const base = invocationFingerprint({ intent: 'x', metadata: { a: '1' } });
    expect(invocationFingerprint({ intent: 'x', metadata: { a: '2' } })).not.toBe(base);
    expect(
      invocationFingerprint({ intent: 'x', metadata: { a: '1' }, workflow_contract_id: 'wfc_1' }),
    ).not.toBe(base);
  });
});
