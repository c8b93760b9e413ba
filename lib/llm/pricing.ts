import type { Usage } from './types.ts';

/** USD per million tokens: input, cached input, output. Known models only; others report no cost. */
const PRICES: Record<string, [number, number, number]> = {
  'gpt-4.1': [2, 0.5, 8],
  'gpt-4.1-mini': [0.4, 0.1, 1.6],
  'gpt-4.1-nano': [0.1, 0.025, 0.4],
  'gpt-4o': [2.5, 1.25, 10],
  'gpt-4o-mini': [0.15, 0.075, 0.6],
  'gpt-5': [1.25, 0.125, 10],
  'gpt-5-mini': [0.25, 0.025, 2],
  'claude-sonnet-4-5': [3, 0.3, 15],
  'claude-sonnet-4': [3, 0.3, 15],
  'claude-haiku-4-5': [1, 0.1, 5],
  'claude-3-5-haiku': [0.8, 0.08, 4],
  'claude-opus-4-1': [15, 1.5, 75],
};

/** Price row for a model id, matching dated variants (`claude-sonnet-4-5-20250929`) to their family. */
function priceOf(model: string): [number, number, number] | undefined {
  const id = model.includes('/') ? model.slice(model.indexOf('/') + 1) : model;
  if (PRICES[id]) return PRICES[id];
  const family = Object.keys(PRICES)
    .filter((k) => id.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return family ? PRICES[family] : undefined;
}

export function costOf(
  model: string,
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedTokens'>,
): number | undefined {
  const p = priceOf(model);
  if (!p) return undefined;
  const fresh = Math.max(0, usage.promptTokens - usage.cachedTokens);
  return (fresh * p[0] + usage.cachedTokens * p[1] + usage.completionTokens * p[2]) / 1_000_000;
}
