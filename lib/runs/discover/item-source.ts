/**
 * Discovered URLs become the Map's item source as one JSON file in the evidence store, never as a
 * state-machine payload (Step Functions caps those at 256 KB; thousands of URLs do not fit).
 */
import { evidenceKey } from '../../store/keys.ts';
import type { EvidenceStore } from '../../store/ports.ts';
import { manifestedEvidence } from '../manifested-evidence.ts';

export interface DiscoveredSample {
  sampleId: string;
  url: string;
}

/** Ids follow discovery order and sort the same way as text: `d000001`, `d000002`, … */
export function discoveredSamples(urls: string[]): DiscoveredSample[] {
  const width = Math.max(6, String(urls.length).length);
  return urls.map((url, i) => ({ sampleId: `d${String(i + 1).padStart(width, '0')}`, url }));
}

export function discoveryItemsKey(tenant: string, runId: string): string {
  return evidenceKey(tenant, runId, 'discovery', 'samples.json');
}

export async function writeItemSource(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  urls: string[],
): Promise<{ key: string; count: number; sha256: string }> {
  const key = discoveryItemsKey(tenant, runId);
  // Run evidence like any other: chained into the run's manifest part.
  const written = await manifestedEvidence(evidence, tenant, runId).put(
    key,
    JSON.stringify(discoveredSamples(urls)),
    'application/json',
  );
  return { key, count: urls.length, sha256: written.sha256 };
}

export async function readItemSource(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
): Promise<DiscoveredSample[]> {
  const body = await evidence.get(discoveryItemsKey(tenant, runId));
  if (!body) throw new Error(`run ${runId} has no discovered samples`);
  return JSON.parse(Buffer.from(body).toString('utf8')) as DiscoveredSample[];
}
