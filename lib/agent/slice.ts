export type { AgentDeps, SliceOptions } from './deps.ts';
