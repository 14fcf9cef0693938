/**
 * A translation bundle for the unit tests that formats as JupyterLab's null
 * translator does (%1, %2…, `_n` by n === 1): `@jupyterlab/translation` is
 * ESM-only, which jest does not load.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

const format = (text: string, ...args: unknown[]): string =>
  text.replace(/%(\d+)/g, (all, n) =>
    Number(n) <= args.length ? String(args[Number(n) - 1]) : all
  );

export const trans = {
  __: (text: string, ...args: unknown[]) => format(text, ...args),
  _n: (one: string, many: string, n: number, ...args: unknown[]) =>
    format(n === 1 ? one : many, n, ...args),
  _p: (context: string, text: string, ...args: unknown[]) =>
    format(text, ...args)
} as unknown as TranslationBundle;
