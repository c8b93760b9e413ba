/**
 * What a scenario learns about a site, per domain: the model's `experiences` (short facts about
 * how the app behaves, offered to later steps and samples) and the blocker clearings it found
 * (replayed with zero tokens). Plain JSON: in memory for one CLI / API call, in the run's store
 * between the samples of a run. Pure functions; the newest entries are kept.
 */
import type { ClearingRecipe } from './blockers.ts';

export const EXPERIENCES_PER_DOMAIN = 12;
export const CLEARINGS_PER_DOMAIN = 5;

export type ScenarioMemory = Record<string, { experiences: string[]; clearings: ClearingRecipe[] }>;

export function domainOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

const entryOf = (memory: ScenarioMemory, domain: string) =>
  memory[domain] ?? { experiences: [], clearings: [] };

export function addExperiences(
  memory: ScenarioMemory,
  url: string,
  lines: readonly string[],
): ScenarioMemory {
  const domain = domainOf(url);
  const fresh = lines.map((l) => l.trim()).filter((l) => l.length > 0 && l.length <= 300);
  if (!domain || fresh.length === 0) return memory;
  const entry = entryOf(memory, domain);
  const experiences = [...entry.experiences.filter((e) => !fresh.includes(e)), ...fresh].slice(
    -EXPERIENCES_PER_DOMAIN,
  );
  return { ...memory, [domain]: { ...entry, experiences } };
}

export function addClearing(memory: ScenarioMemory, url: string, recipe: ClearingRecipe): ScenarioMemory {
  const domain = domainOf(url);
  if (!domain || recipe.commands.length === 0) return memory;
  const entry = entryOf(memory, domain);
  const first = recipe.commands[0]!.locator.xpath;
  const clearings = [...entry.clearings.filter((c) => c.commands[0]?.locator.xpath !== first), recipe].slice(
    -CLEARINGS_PER_DOMAIN,
  );
  return { ...memory, [domain]: { ...entry, clearings } };
}

export const experiencesFor = (memory: ScenarioMemory, url: string): string[] =>
  memory[domainOf(url)]?.experiences ?? [];
export const clearingsFor = (memory: ScenarioMemory, url: string): ClearingRecipe[] =>
  memory[domainOf(url)]?.clearings ?? [];
