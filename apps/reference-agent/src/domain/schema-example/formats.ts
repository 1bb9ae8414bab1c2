import { createHash } from 'node:crypto';
import type { Context, Position } from './schema';
import { codePoints, humanize, textFor } from './text';

/** A deterministic RFC 4122-shaped UUID (version 4 layout) derived from the intent and the value's place. */
function stableUuid(ctx: Context, where: Position): string {
  const hex = createHash('sha256')
    .update(`${ctx.intent}\u0000${where.path}\u0000${where.variant}`)
    .digest('hex');
  const variantNibble = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variantNibble}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function slug(key: string | undefined): string {
  return (
    humanize(key)
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'resource'
  );
}

/** A value for a known `format`, or `undefined` for a format without a generator. */
export function formatValue(
  format: string,
  ctx: Context,
  where: Position,
  minLength: number,
): string | undefined {
  const n = where.variant;
  const at = new Date(ctx.now.getTime() + n * 1000);
  switch (format) {
    case 'date-time':
      return at.toISOString();
    case 'date':
      return new Date(ctx.now.getTime() + n * 86_400_000).toISOString().slice(0, 10);
    case 'time':
      return `${at.toISOString().slice(11, 19)}Z`;
    case 'duration':
      return `PT${n + 1}M`;
    case 'email':
    case 'idn-email':
      return n > 0 ? `agent+${n + 1}@example.com` : 'agent@example.com';
    case 'hostname':
    case 'idn-hostname':
      return n > 0 ? `agent-${n + 1}.example.com` : 'agent.example.com';
    case 'ipv4':
      return `192.0.2.${(n % 254) + 1}`;
    case 'ipv6':
      return `2001:db8::${(n + 1).toString(16)}`;
    case 'uri':
    case 'url':
    case 'iri': {
      let uri = `https://example.com/${slug(where.key)}${n > 0 ? `/${n + 1}` : ''}`;
      while (codePoints(uri).length < minLength) uri += '/details';
      return uri;
    }
    case 'uri-reference':
    case 'iri-reference':
      return `/${slug(where.key)}${n > 0 ? `/${n + 1}` : ''}`;
    case 'uri-template':
      return `https://example.com/${slug(where.key)}/{id}`;
    case 'uuid':
      return stableUuid(ctx, where);
    case 'json-pointer':
      return `/${slug(where.key)}`;
    case 'relative-json-pointer':
      return String(n);
    case 'regex':
      return '^.*$';
    case 'byte':
      return Buffer.from(textFor(where.key, ctx.intent, n)).toString('base64');
    default:
      return undefined;
  }
}
