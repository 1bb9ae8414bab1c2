import type { Schema } from './schema';

function decimalsOf(value: number): number {
  const text = String(value);
  if (text.includes('e-')) return Number(text.split('e-')[1]);
  return text.includes('.') ? (text.split('.')[1] as string).length : 0;
}

/** A number (or integer) inside the bounds and on the `multipleOf` grid, near the middle of the range. */
export function numberValue(s: Schema, integer: boolean, variant: number): number {
  const num = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : undefined);
  const minimum = num('minimum');
  const maximum = num('maximum');
  const exclusiveMinimum = num('exclusiveMinimum');
  const exclusiveMaximum = num('exclusiveMaximum');
  const multipleOf = num('multipleOf');

  const low = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
  const high = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
  const fits = (value: number) =>
    (minimum === undefined || value >= minimum) &&
    (maximum === undefined || value <= maximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum) &&
    (!integer || Number.isInteger(value)) &&
    // The same test ajv runs, so floating-point steps such as 0.1 are judged exactly as the server will.
    (multipleOf === undefined || Number.isInteger(value / multipleOf));

  let target: number;
  if (Number.isFinite(low) && Number.isFinite(high)) target = low + (high - low) / 2;
  else if (Number.isFinite(low)) target = low + 1;
  else if (Number.isFinite(high)) target = Math.min(high - 1, 1);
  else target = 1;
  target += variant;
  if (Number.isFinite(high) && target >= high) target = Number.isFinite(low) ? low + (high - low) / 2 : high;

  const step = multipleOf ?? (integer ? 1 : undefined);
  if (step === undefined) {
    if (fits(target)) return target;
    for (const candidate of [low, high, (low + high) / 2])
      if (Number.isFinite(candidate) && fits(candidate)) return candidate;
    return Number.isFinite(low) ? low : 0;
  }
  const decimals = Math.min(decimalsOf(step), 15);
  const base = Math.round(target / step);
  for (let offset = 0; offset < 10_000; offset += 1) {
    for (const k of offset === 0 ? [base] : [base + offset, base - offset]) {
      const candidate = Number((k * step).toFixed(decimals));
      if (fits(candidate)) return candidate;
    }
  }
  return Number.isFinite(low) ? low : 0;
}
