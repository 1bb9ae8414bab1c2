import { normalizeIntent } from '@svc/contracts';
import { compileContracts } from '../src/domain/contract-matcher';
import type { MatcherContract } from '../src/domain/contract-matcher';

function contract(id: string, partial: Partial<MatcherContract> & { phrases?: string[] }): MatcherContract {
  return {
    id,
    name: partial.name ?? id,
    priority: partial.priority ?? 0,
    isFallback: partial.isFallback ?? false,
    classifier: partial.classifier ?? {
      intentContains: partial.phrases ?? [],
      requiredCapabilities: [],
      metadata: {},
    },
    template: null,
  };
}

/** A seeded generator, so failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffle<T>(items: T[], next: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe('normalizeIntent', () => {
  test('when text has compatibility forms, case and whitespace runs, then it is NFKC, lower case and collapsed', () => {
    expect(normalizeIntent('  Ｄｅｐｌｏｙ\tTHE\n\n  ﬁx  ')).toBe('deploy the fix');
    expect(normalizeIntent('Ⅻ  Straße')).toBe('xii straße');
    expect(normalizeIntent('   ')).toBe('');
  });
});

describe('compileContracts', () => {
  test('when phrases overlap and nest, then every phrase occurring in the intent is found (checked against a naive scan)', () => {
    const next = random(7);
    const alphabet = 'abcab ';
    const word = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    for (let round = 0; round < 50; round += 1) {
      const contracts = Array.from({ length: 30 }, (_, i) =>
        contract(`c${String(i).padStart(3, '0')}`, { phrases: [word(1 + Math.floor(next() * 4))] }),
      );
      const compiled = compileContracts(contracts);
      const intent = word(40);
      const normalized = normalizeIntent(intent);
      const outcome = compiled.match({ intent });
      const expected = contracts
        .filter((c) => {
          const phrase = normalizeIntent(c.classifier.intentContains[0] as string);
          return phrase !== '' && normalized.includes(phrase);
        })
        .map((c) => c.id)
        .sort();
      const matched = outcome.explanation.candidates
        .filter((c) => c.matched)
        .map((c) => c.contract_id)
        .sort();
      expect(matched).toEqual(expected);
    }
  });

  test('when the same contracts come in any order, then the winner and the explanation are identical', () => {
    const contracts = [
      contract('c001', { phrases: ['deploy'], priority: 1 }),
      contract('c002', { phrases: ['deploy', 'prod'], priority: 1 }),
      contract('c003', { phrases: ['deploy'], priority: 1 }),
      contract('c004', {
        isFallback: true,
        priority: 1,
        classifier: { intentContains: [], requiredCapabilities: [], metadata: {} },
      }),
      contract('c005', { phrases: ['rollback'], priority: 9 }),
    ];
    const next = random(42);
    const reference = compileContracts(contracts).match({ intent: 'Deploy to PROD now' });
    expect(reference.winner?.id).toBe('c002');
    expect(reference.explanation.winner_rule).toBe('criteria_matched');
    for (let i = 0; i < 20; i += 1) {
      const outcome = compileContracts(shuffle(contracts, next)).match({ intent: 'Deploy to PROD now' });
      expect(outcome).toEqual(reference);
    }
  });

  test('when contracts tie on everything, then the oldest contract_id wins, and a specific contract beats the fallback', () => {
    const fallback = contract('c001', {
      isFallback: true,
      classifier: { intentContains: [], requiredCapabilities: [], metadata: {} },
    });
    const specific = contract('c002', {
      classifier: { intentContains: [], requiredCapabilities: [], metadata: { app: 'crm' } },
    });
    const twin = contract('c003', {
      classifier: { intentContains: [], requiredCapabilities: [], metadata: { app: 'crm' } },
    });
    const outcome = compileContracts([twin, specific, fallback]).match({
      intent: 'x',
      metadata: { app: 'crm' },
    });
    expect(outcome.winner?.id).toBe('c002');
    expect(outcome.explanation.winner_rule).toBe('oldest_contract');
    const alone = compileContracts([fallback]).match({ intent: 'x' });
    expect(alone.explanation.winner_rule).toBe('only_candidate');
    const tie = compileContracts([fallback, contract('c009', { phrases: ['zzz'] })]);
    expect(tie.match({ intent: 'zzz' }).explanation.winner_rule).toBe('criteria_matched');
    const zeroCriteria = compileContracts([
      fallback,
      contract('c010', {
        classifier: { intentContains: [], requiredCapabilities: [], metadata: { a: 'b' } },
      }),
    ]);
    expect(zeroCriteria.match({ intent: 'q', metadata: { a: 'b' } }).winner?.id).toBe('c010');
  });

  test('when a criterion fails, then the contract is listed unmatched with the reason, and contracts with no passing criterion are only counted', () => {
    const compiled = compileContracts([
      contract('c001', {
        classifier: {
          intentContains: ['deploy'],
          requiredCapabilities: ['k8s', 'gpu'],
          metadata: { app: 'crm' },
        },
      }),
      contract('c002', { phrases: ['unrelated'] }),
    ]);
    const outcome = compiled.match({
      intent: 'deploy',
      required_capabilities: ['k8s'],
      metadata: { app: 'erp' },
    });
    expect(outcome.winner).toBeNull();
    expect(outcome.explanation.active_contracts).toBe(2);
    expect(outcome.explanation.unlisted_contracts).toBe(1);
    const [candidate] = outcome.explanation.candidates;
    expect(candidate?.matched).toBe(false);
    expect(candidate?.criteria.map((c) => [c.kind, c.value, c.passed])).toEqual([
      ['intent_contains', 'deploy', true],
      ['required_capability', 'k8s', true],
      ['required_capability', 'gpu', false],
      ['metadata', 'app=crm', false],
    ]);
    expect(candidate?.criteria[3]?.reason).toContain("'erp'");
  });
});
