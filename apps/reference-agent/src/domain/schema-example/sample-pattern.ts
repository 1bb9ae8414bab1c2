/**
 * A small generator of strings matching a JSON Schema `pattern` (ECMA-262 with the `u` flag, as ajv
 * compiles it). It understands literals, escapes (`\d \w \s`, `\uXXXX`, `\u{…}`, `\xHH`), `.`, character
 * classes with ranges and negation, groups with alternation (the first alternative wins), anchors and the
 * quantifiers `? * + {n} {n,} {n,m}` (the smallest count wins, at least one for `+`). Look-arounds and
 * back-references are skipped. The result is checked against the real pattern; `undefined` means "could not
 * produce a match", so callers fall back to something else.
 */

type Node =
  | { kind: 'text'; value: string }
  | { kind: 'class'; chars: string[]; negated: boolean }
  | { kind: 'sequence'; items: Node[] }
  | { kind: 'alternation'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

/** Characters tried, in order, for a negated class or a `.`. */
const PRINTABLE = ['a', 'x', 'A', '0', '_', '-', ' ', '.', 'z', 'Z', '9'];
const DIGITS = '0123456789'.split('');
const WORD = [...'abcdefghijklmnopqrstuvwxyz', ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', ...DIGITS, '_'];
const SPACE = [' ', '\t', '\n'];

class PatternParser {
  private pos = 0;

  constructor(private readonly source: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.source.length) throw new Error(`unexpected ${this.source[this.pos]}`);
    return node;
  }

  private peek(): string | undefined {
    return this.source[this.pos];
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.pos += 1;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { kind: 'alternation', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.pos < this.source.length && this.peek() !== '|' && this.peek() !== ')') {
      items.push(this.quantified(this.atom()));
    }
    return { kind: 'sequence', items };
  }

  private quantified(node: Node): Node {
    const next = this.peek();
    let min: number;
    let max: number;
    if (next === '*' || next === '+' || next === '?') {
      min = next === '+' ? 1 : 0;
      max = next === '?' ? 1 : Infinity;
      this.pos += 1;
    } else if (next === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.pos));
      if (!match) return node;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] ? Number(match[3]) : Infinity;
      this.pos += match[0].length;
    } else {
      return node;
    }
    if (this.peek() === '?') this.pos += 1;
    return { kind: 'repeat', node, min, max };
  }

  private atom(): Node {
    const char = this.source[this.pos] as string;
    this.pos += 1;
    switch (char) {
      case '^':
      case '$':
        return { kind: 'text', value: '' };
      case '.':
        return { kind: 'class', chars: ['\n', '\r', '\u2028', '\u2029'], negated: true };
      case '(':
        return this.group();
      case '[':
        return this.characterClass();
      case '\\':
        return this.escape(false);
      default:
        return { kind: 'text', value: char };
    }
  }

  private group(): Node {
    let lookaround = false;
    if (this.peek() === '?') {
      const rest = this.source.slice(this.pos);
      if (rest.startsWith('?:')) this.pos += 2;
      else if (rest.startsWith('?=') || rest.startsWith('?!')) {
        lookaround = true;
        this.pos += 2;
      } else if (rest.startsWith('?<=') || rest.startsWith('?<!')) {
        lookaround = true;
        this.pos += 3;
      } else if (rest.startsWith('?<')) {
        const end = this.source.indexOf('>', this.pos);
        if (end < 0) throw new Error('unterminated group name');
        this.pos = end + 1;
      } else {
        throw new Error('unsupported group');
      }
    }
    const inner = this.alternation();
    if (this.peek() !== ')') throw new Error('unterminated group');
    this.pos += 1;
    return lookaround ? { kind: 'text', value: '' } : inner;
  }

  private characterClass(): Node {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.pos += 1;
    }
    const chars: string[] = [];
    let first = true;
    while (this.pos < this.source.length && (this.peek() !== ']' || first)) {
      first = false;
      const start = this.classMember();
      if (this.peek() === '-' && this.source[this.pos + 1] !== ']' && this.pos + 1 < this.source.length) {
        this.pos += 1;
        const end = this.classMember();
        const [from, to] = [start[0], end[0]];
        if (start.length === 1 && end.length === 1 && from !== undefined && to !== undefined) {
          const low = from.codePointAt(0) as number;
          const high = to.codePointAt(0) as number;
          for (let code = low; code <= high && code - low < 256; code += 1)
            chars.push(String.fromCodePoint(code));
          continue;
        }
        chars.push(...start, '-', ...end);
        continue;
      }
      chars.push(...start);
    }
    if (this.peek() !== ']') throw new Error('unterminated class');
    this.pos += 1;
    return { kind: 'class', chars, negated };
  }

  /** One member of a class: a single character, or the characters of an escape such as `\d`. */
  private classMember(): string[] {
    const char = this.source[this.pos] as string;
    this.pos += 1;
    if (char !== '\\') return [char];
    const node = this.escape(true);
    if (node.kind === 'text') return [node.value];
    if (node.kind === 'class' && !node.negated) return node.chars;
    // A negated escape inside a class (`[\D]`): approximate with the printable characters it allows.
    return node.kind === 'class' ? PRINTABLE.filter((c) => !node.chars.includes(c)) : [];
  }

  private escape(inClass: boolean): Node {
    const char = this.source[this.pos] as string;
    this.pos += 1;
    switch (char) {
      case 'd':
        return { kind: 'class', chars: DIGITS, negated: false };
      case 'D':
        return { kind: 'class', chars: DIGITS, negated: true };
      case 'w':
        return { kind: 'class', chars: WORD, negated: false };
      case 'W':
        return { kind: 'class', chars: WORD, negated: true };
      case 's':
        return { kind: 'class', chars: SPACE, negated: false };
      case 'S':
        return { kind: 'class', chars: SPACE, negated: true };
      case 'b':
        return inClass ? { kind: 'text', value: '\b' } : { kind: 'text', value: '' };
      case 'B':
        return { kind: 'text', value: '' };
      case 'n':
        return { kind: 'text', value: '\n' };
      case 't':
        return { kind: 'text', value: '\t' };
      case 'r':
        return { kind: 'text', value: '\r' };
      case 'f':
        return { kind: 'text', value: '\f' };
      case 'v':
        return { kind: 'text', value: '\v' };
      case '0':
        return { kind: 'text', value: '\0' };
      case 'x': {
        const hex = this.source.slice(this.pos, this.pos + 2);
        this.pos += 2;
        return { kind: 'text', value: String.fromCodePoint(parseInt(hex, 16)) };
      }
      case 'u': {
        if (this.peek() === '{') {
          const end = this.source.indexOf('}', this.pos);
          const hex = this.source.slice(this.pos + 1, end);
          this.pos = end + 1;
          return { kind: 'text', value: String.fromCodePoint(parseInt(hex, 16)) };
        }
        const hex = this.source.slice(this.pos, this.pos + 4);
        this.pos += 4;
        return { kind: 'text', value: String.fromCharCode(parseInt(hex, 16)) };
      }
      case 'p':
      case 'P': {
        // Unicode property escapes: letters are the common case; the final check catches the rest.
        const end = this.source.indexOf('}', this.pos);
        const name = this.source.slice(this.pos + 1, end);
        this.pos = end + 1;
        const upper = /^(Lu|Uppercase_Letter|Uppercase)$/.test(name);
        const digit = /^(N|Nd|Number|Decimal_Number)$/.test(name);
        const chars = digit ? DIGITS : upper ? ['A', 'B', 'C'] : ['a', 'b', 'c'];
        return { kind: 'class', chars, negated: char === 'P' };
      }
      default:
        if (/[1-9]/.test(char)) return { kind: 'text', value: '' };
        return { kind: 'text', value: char };
    }
  }
}

/** Renders the tree; `extra` adds repetitions to every quantifier that allows more than its minimum. */
function render(node: Node, variant: number, extra = 0): string {
  switch (node.kind) {
    case 'text':
      return node.value;
    case 'class': {
      if (!node.negated) {
        if (node.chars.length === 0) return '';
        return node.chars[variant % node.chars.length] as string;
      }
      const allowed = PRINTABLE.filter((c) => !node.chars.includes(c));
      return allowed[variant % Math.max(allowed.length, 1)] ?? '';
    }
    case 'sequence':
      return node.items.map((item) => render(item, variant, extra)).join('');
    case 'alternation':
      return render(node.options[0] as Node, variant, extra);
    case 'repeat':
      return render(node.node, variant, extra).repeat(Math.min(node.max, node.min + extra));
  }
}

export interface SampleLengths {
  minLength?: number;
  maxLength?: number;
}

/**
 * A string matching `pattern`, varied by `variant` (distinct variants give distinct strings where it can),
 * within the lengths (in code points) when the pattern's quantifiers allow it.
 */
export function samplePattern(pattern: string, variant = 0, lengths: SampleLengths = {}): string | undefined {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  let tree: Node;
  try {
    tree = new PatternParser(pattern).parse();
  } catch {
    return undefined;
  }
  const minLength = lengths.minLength ?? 0;
  const maxLength = lengths.maxLength ?? Infinity;
  let fallback: string | undefined;
  for (const attempt of [variant, 0]) {
    for (const extra of [0, 1, 2, 4, 8, 16, 32, minLength]) {
      const value = render(tree, attempt, extra);
      if (!regex.test(value)) continue;
      fallback ??= value;
      const length = Array.from(value).length;
      if (length >= minLength && length <= maxLength) return value;
      if (length > maxLength) break;
    }
  }
  return fallback;
}

/** True when `value` matches the JSON Schema `pattern` (false for a pattern that does not compile). */
export function matchesPattern(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}
