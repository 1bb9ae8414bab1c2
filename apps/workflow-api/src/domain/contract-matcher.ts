/**
 * The deterministic classifier behind resolve (ARCHITECTURE §4), as pure functions: a project's active contracts
 * are compiled once into indexes (an Aho–Corasick automaton over every normalized `intentContains` phrase, plus
 * capability and metadata indexes), so one match costs O(intent length + contracts that pass at least one
 * criterion) instead of O(contracts × phrases).
 */
import { normalizeIntent } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import type { TemplateDefinition } from './template-definition';

export interface ClassifierRules {
  intentContains: string[];
  requiredCapabilities: string[];
  metadata: Record<string, string>;
}

export interface TemplateRef {
  key: string;
  version: string;
  /** The stored template definition with its stages made explicit. */
  definition: Required<TemplateDefinition>;
}

export interface MatcherContract {
  id: string;
  name: string;
  priority: number;
  isFallback: boolean;
  classifier: ClassifierRules;
  template: TemplateRef | null;
}

type Schemas = WorkflowApi.components['schemas'];
export type MatchRequest = Schemas['ContractsResolveRequest'];
export type CriterionResult = Schemas['ContractsResolveCriterion'];
export type CriterionKind = CriterionResult['kind'];
export type CandidateExplanation = Schemas['ContractsResolveCandidate'];
/**
 * Resolve's explanation: every contract considered (each fallback; each contract with `intentContains` phrases of
 * which one occurs in the intent; each contract without phrases of which at least one criterion passes), matched
 * ones first in winning order, the rest counted in `unlisted_contracts`, and the rule that decided the winner.
 */
export type MatchExplanation = Schemas['ContractsResolveResult']['explanation'];
/** Which rule of the total order decided the winner against the runner-up. */
export type WinnerRule = NonNullable<MatchExplanation['winner_rule']>;

export interface MatchOutcome {
  winner: MatcherContract | null;
  explanation: MatchExplanation;
}

interface CompiledContract {
  contract: MatcherContract;
  /** Normalized phrase ids, in classifier order. */
  phraseIds: number[];
  phraseTexts: string[];
  metadata: [string, string][];
}

/** A flat Aho–Corasick automaton over UTF-16 code units. */
class PhraseAutomaton {
  private readonly edges = new Map<number, number>();
  private readonly parent: number[] = [0];
  private readonly unit: number[] = [0];
  private readonly depth: number[] = [0];
  private fail: number[] = [0];
  /** Nearest node on the fail chain (excluding itself) that ends a phrase, or -1. */
  private outputLink: number[] = [-1];
  private readonly phraseAt = new Map<number, number>();
  private readonly ids = new Map<string, number>();

  get size(): number {
    return this.ids.size;
  }

  /** Adds a phrase (already normalized, non-empty) and returns its id; equal phrases share one id. */
  add(phrase: string): number {
    const known = this.ids.get(phrase);
    if (known !== undefined) return known;
    let node = 0;
    for (let i = 0; i < phrase.length; i += 1) {
      const code = phrase.charCodeAt(i);
      const key = node * 65536 + code;
      let next = this.edges.get(key);
      if (next === undefined) {
        next = this.parent.length;
        this.parent.push(node);
        this.unit.push(code);
        this.depth.push((this.depth[node] as number) + 1);
        this.edges.set(key, next);
      }
      node = next;
    }
    const id = this.ids.size;
    this.ids.set(phrase, id);
    this.phraseAt.set(node, id);
    return id;
  }

  /** Computes fail and output links; call once after every phrase is added. */
  build(): void {
    const count = this.parent.length;
    const order = Array.from({ length: count }, (_, i) => i).sort(
      (a, b) => (this.depth[a] as number) - (this.depth[b] as number) || a - b,
    );
    this.fail = new Array<number>(count).fill(0);
    this.outputLink = new Array<number>(count).fill(-1);
    for (const node of order) {
      if (node === 0) continue;
      const parent = this.parent[node] as number;
      const code = this.unit[node] as number;
      let target = 0;
      if (parent !== 0) {
        let f = this.fail[parent] as number;
        for (;;) {
          const next = this.edges.get(f * 65536 + code);
          if (next !== undefined) {
            target = next;
            break;
          }
          if (f === 0) break;
          f = this.fail[f] as number;
        }
      }
      this.fail[node] = target;
      this.outputLink[node] = this.phraseAt.has(target) ? target : (this.outputLink[target] as number);
    }
  }

  /** Ids of every phrase occurring in the text. */
  find(text: string): Set<number> {
    const found = new Set<number>();
    if (this.ids.size === 0) return found;
    const seen = new Set<number>();
    let state = 0;
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      for (;;) {
        const next = this.edges.get(state * 65536 + code);
        if (next !== undefined) {
          state = next;
          break;
        }
        if (state === 0) break;
        state = this.fail[state] as number;
      }
      let node = state;
      while (node > 0 && !seen.has(node)) {
        seen.add(node);
        const id = this.phraseAt.get(node);
        if (id !== undefined) found.add(id);
        node = this.outputLink[node] as number;
      }
    }
    return found;
  }
}

export interface CompiledContracts {
  readonly contracts: number;
  match(request: MatchRequest): MatchOutcome;
}

function pushIndex(index: Map<string, number[]>, key: string, at: number): void {
  const list = index.get(key);
  if (list) {
    if (list[list.length - 1] !== at) list.push(at);
  } else index.set(key, [at]);
}

function metadataKey(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

/** Winning order: priority desc, criteria matched desc, non-fallback first, oldest contract_id (ids sort by time). */
function compareWinners(a: CandidateExplanation, b: CandidateExplanation): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.criteria_matched !== b.criteria_matched) return b.criteria_matched - a.criteria_matched;
  if (a.is_fallback !== b.is_fallback) return a.is_fallback ? 1 : -1;
  return a.contract_id < b.contract_id ? -1 : a.contract_id > b.contract_id ? 1 : 0;
}

function compareUnmatched(a: CandidateExplanation, b: CandidateExplanation): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.contract_id < b.contract_id ? -1 : a.contract_id > b.contract_id ? 1 : 0;
}

function explainWinner(matched: CandidateExplanation[]): { rule: WinnerRule; reason: string } | null {
  const [winner, runnerUp] = matched;
  if (!winner) return null;
  if (!runnerUp) {
    return {
      rule: 'only_candidate',
      reason: `'${winner.name}' (${winner.contract_id}) is the only contract whose classifier matched.`,
    };
  }
  const of = `'${winner.name}' (${winner.contract_id}) won over ${matched.length - 1} other matching contract(s)`;
  if (winner.priority !== runnerUp.priority) {
    return {
      rule: 'priority',
      reason: `${of}: highest priority ${winner.priority} (next best ${runnerUp.priority}).`,
    };
  }
  if (winner.criteria_matched !== runnerUp.criteria_matched) {
    return {
      rule: 'criteria_matched',
      reason: `${of}: priority tie at ${winner.priority}, most criteria matched (${winner.criteria_matched} vs ${runnerUp.criteria_matched}).`,
    };
  }
  if (winner.is_fallback !== runnerUp.is_fallback) {
    return {
      rule: 'non_fallback',
      reason: `${of}: priority and criteria tie, a specific contract wins over the universal fallback.`,
    };
  }
  return {
    rule: 'oldest_contract',
    reason: `${of}: priority, criteria and fallback tie, the oldest contract_id wins (${runnerUp.contract_id} is newer).`,
  };
}

/** Compiles a project's active contracts. The result is immutable and safe to share between requests. */
export function compileContracts(input: MatcherContract[]): CompiledContracts {
  const automaton = new PhraseAutomaton();
  const compiled: CompiledContract[] = [];
  const byPhrase = new Map<number, number[]>();
  const byCapability = new Map<string, number[]>();
  const byMetadata = new Map<string, number[]>();
  const fallbacks: number[] = [];
  const sorted = [...input].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  sorted.forEach((contract, at) => {
    const phraseTexts: string[] = [];
    const phraseIds: number[] = [];
    for (const raw of contract.classifier.intentContains) {
      const phrase = normalizeIntent(raw);
      if (!phrase || phraseTexts.includes(phrase)) continue;
      const id = automaton.add(phrase);
      phraseTexts.push(phrase);
      phraseIds.push(id);
      const list = byPhrase.get(id);
      if (list) list.push(at);
      else byPhrase.set(id, [at]);
    }
    const capabilities = [...new Set(contract.classifier.requiredCapabilities)];
    const metadata = Object.entries(contract.classifier.metadata).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    // A contract with phrases is considered only when one of them occurs; the others when any criterion passes.
    if (phraseIds.length === 0) {
      for (const capability of capabilities) pushIndex(byCapability, capability, at);
      for (const [key, value] of metadata) pushIndex(byMetadata, metadataKey(key, value), at);
    }
    if (contract.isFallback) fallbacks.push(at);
    compiled.push({
      contract: { ...contract, classifier: { ...contract.classifier, requiredCapabilities: capabilities } },
      phraseIds,
      phraseTexts,
      metadata,
    });
  });
  automaton.build();
  const byId = new Map(compiled.map((c) => [c.contract.id, c.contract]));

  function evaluate(
    entry: CompiledContract,
    found: Set<number>,
    capabilities: Set<string>,
    metadata: Record<string, string>,
  ): CandidateExplanation {
    const { contract } = entry;
    const criteria: CriterionResult[] = [];
    let criteriaMatched = 0;
    let matched: boolean;
    if (contract.isFallback) {
      criteria.push({
        kind: 'fallback',
        value: '*',
        passed: true,
        reason: 'The universal fallback matches any intent.',
      });
      matched = true;
    } else {
      let anyPhrase = entry.phraseIds.length === 0;
      entry.phraseIds.forEach((id, i) => {
        const phrase = entry.phraseTexts[i] as string;
        const passed = found.has(id);
        if (passed) {
          anyPhrase = true;
          criteriaMatched += 1;
        }
        criteria.push({
          kind: 'intent_contains',
          value: phrase,
          passed,
          reason: passed
            ? `The normalized intent contains '${phrase}'.`
            : `The normalized intent does not contain '${phrase}'.`,
        });
      });
      let allCapabilities = true;
      for (const capability of contract.classifier.requiredCapabilities) {
        const passed = capabilities.has(capability);
        if (passed) criteriaMatched += 1;
        else allCapabilities = false;
        criteria.push({
          kind: 'required_capability',
          value: capability,
          passed,
          reason: passed
            ? `The request lists capability '${capability}'.`
            : `The request's required_capabilities do not list '${capability}'.`,
        });
      }
      let allMetadata = true;
      for (const [key, value] of entry.metadata) {
        const actual = Object.prototype.hasOwnProperty.call(metadata, key) ? metadata[key] : undefined;
        const passed = actual === value;
        if (passed) criteriaMatched += 1;
        else allMetadata = false;
        criteria.push({
          kind: 'metadata',
          value: `${key}=${value}`,
          passed,
          reason: passed
            ? `metadata.${key} equals '${value}'.`
            : actual === undefined
              ? `metadata.${key} is missing (expected '${value}').`
              : `metadata.${key} is '${actual}', not '${value}'.`,
        });
      }
      matched = anyPhrase && allCapabilities && allMetadata;
    }
    return {
      contract_id: contract.id,
      name: contract.name,
      priority: contract.priority,
      is_fallback: contract.isFallback,
      matched,
      criteria_matched: criteriaMatched,
      criteria,
    };
  }

  return {
    contracts: compiled.length,
    match(request: MatchRequest): MatchOutcome {
      const normalized = normalizeIntent(request.intent);
      const capabilities = new Set(request.required_capabilities ?? []);
      const metadata = request.metadata ?? {};
      const found = automaton.find(normalized);
      const considered = new Set<number>(fallbacks);
      for (const id of found) for (const at of byPhrase.get(id) ?? []) considered.add(at);
      for (const capability of capabilities)
        for (const at of byCapability.get(capability) ?? []) considered.add(at);
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== 'string') continue;
        for (const at of byMetadata.get(metadataKey(key, value)) ?? []) considered.add(at);
      }
      const evaluated = [...considered].map((at) =>
        evaluate(compiled[at] as CompiledContract, found, capabilities, metadata),
      );
      const matched = evaluated.filter((c) => c.matched).sort(compareWinners);
      const unmatched = evaluated.filter((c) => !c.matched).sort(compareUnmatched);
      const decision = explainWinner(matched);
      const winnerId = matched[0]?.contract_id;
      const winner = winnerId === undefined ? null : (byId.get(winnerId) ?? null);
      return {
        winner,
        explanation: {
          normalized_intent: normalized,
          active_contracts: compiled.length,
          candidates: [...matched, ...unmatched],
          unlisted_contracts: compiled.length - evaluated.length,
          winner_rule: decision?.rule ?? null,
          winner_reason: decision?.reason ?? null,
        },
      };
    },
  };
}
