/** A fenced code block of a Markdown text: its language, its text and the line its fence opens on. */
export interface CodeBlock {
  lang: string;
  code: string;
  line: number;
}

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j]!)) body.push(lines[j++]!);
    blocks.push({ lang: open[1] ?? '', code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}
