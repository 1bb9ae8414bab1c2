/**
 * oclif reads the command id from the first argument, so `svc --profile prod start …` would look
 * for a command named `--profile`. The spec writes global flags before the command, so this moves
 * leading `--<name> <value>` / `--<name>=<value>` pairs for the given option flags to the end of the
 * command's own arguments (before a `--` separator, if any), where oclif parses them normally.
 *
 * Only option flags (flags that take a value) belong in `names`. Anything else is left untouched.
 */
export function hoistGlobalFlags(argv: readonly string[], names: readonly string[]): string[] {
  const hoisted: string[] = [];
  let index = 0;
  while (index < argv.length) {
    const arg = argv[index] ?? '';
    const name = names.find((candidate) => arg === `--${candidate}` || arg.startsWith(`--${candidate}=`));
    if (name === undefined) break;
    if (arg.includes('=')) {
      hoisted.push(arg);
      index += 1;
    } else {
      const value = argv[index + 1];
      if (value === undefined) break;
      hoisted.push(arg, value);
      index += 2;
    }
  }
  const rest = argv.slice(index);
  if (hoisted.length === 0 || rest.length === 0) return [...argv];
  const separator = rest.indexOf('--');
  return separator === -1
    ? [...rest, ...hoisted]
    : [...rest.slice(0, separator), ...hoisted, ...rest.slice(separator)];
}
