import type { Action } from '../actions/types.ts';

/** One remembered success: what worked for an instruction on a kind of page. No AWS types here. */
export interface CacheEntry {
  key: string;
  instruction: string;
  urlPattern: string;
  signature: string;
  /** Names of `%variables%` the actions use; their values are never stored. */
  variableNames: string[];
  actions: Action[];
  createdAt: string;
  updatedAt: string;
  hits: number;
}

/** Port for the action cache: local files now, DynamoDB on AWS. */
export interface CacheStore {
  get(key: string): Promise<CacheEntry | undefined>;
  put(entry: CacheEntry): Promise<void>;
  delete(key: string): Promise<void>;
}
