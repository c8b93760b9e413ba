import type { Usage } from './types.ts';

/**
 * USD per million tokens: [input, cached input, output], from the providers' public price lists.
 * Known models only; anything else reports no cost rather than a guess. Anthropic cache writes are
 * billed as plain input here (they cost 25% more; the system prompt is written once per 5 minutes).
 */
const PRICES: Record<string, [number, number, number]> = {
  'gpt-4.1': [2, 0.5, 8],
  'gpt-4.1-mini': [0.4, 0.1, 1.6],
  'gpt-4.1-nano': [0.1, 0.025, 0.4],
  'gpt-4o': [2.5, 1.25, 10],
  'gpt-4o-mini': [0.15, 0.075, 0.6],
  'gpt-5': [1.25, 0.125, 10],
  'gpt-5-mini': [0.25, 0.025, 2],
  'gpt-5-nano': [0.05, 0.005, 0.4],
  'o4-mini': [1.1, 0.275, 4.4],
  'claude-sonnet-4-6': [3, 0.3, 15],
  'claude-sonnet-4-5': [3, 0.3, 15],
  'claude-sonnet-4': [3, 0.3, 15],
  'claude-haiku-4-5': [1, 0.1, 5],
  'claude-3-5-haiku': [0.8, 0.08, 4],
  'claude-opus-4-5': [5, 0.5, 25],
  'claude-opus-4-1': [15, 1.5, 75],
};

// Dated snapshots and aliases of a listed model share its price: gpt-4.1-mini-2025-04-14,
// claude-haiku-4-5-20251001, claude-3-5-haiku-latest.
const SNAPSHOT = /^-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/** Price row for a model id (`provider/` prefix allowed). */
export function priceOf(model: string): [number, number, number] | undefined {
  const id = model.includes('/') ? model.slice(model.indexOf('/') + 1) : model;
  const exact = PRICES[id];
  if (exact) return exact;
  const family = Object.keys(PRICES).find((k) => id.startsWith(k) && SNAPSHOT.test(id.slice(k.length)));
  return family ? PRICES[family] : undefined;
}

/** Cost in USD of one or more calls' tokens, or undefined for a model without a known price. */
export function costOf(
  model: string,
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedTokens'>,
): number | undefined {
  const p = priceOf(model);
  if (!p) return undefined;
  const fresh = Math.max(0, usage.promptTokens - usage.cachedTokens);
  return (fresh * p[0] + usage.cachedTokens * p[1] + usage.completionTokens * p[2]) / 1_000_000;
}
