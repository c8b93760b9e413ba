export { type ClearedBlocker, type ClearingRecipe, clearBlockers, FRAMEWORK_RULES } from './blockers.ts';
export { type RecordedCommand, runCommands } from './commands.ts';
export { type CompiledScenario, compileScenario, rulesFor } from './compile.ts';
export {
  type CoordinateCommand,
  FAILURES_BEFORE_COORDINATES,
  type PointRecord,
} from './coordinate-fallback.ts';
export {
  type Command,
  type Decision,
  DecisionSchema,
  settleStatus,
  VERIFICATION_TYPES,
  type VerificationType,
} from './decision.ts';
export {
  compileJourney,
  type ExploreResult,
  explore,
  type Journey,
} from './explore.ts';
export { addClearing, addExperiences, type ScenarioMemory } from './memory.ts';
export { type RepairResult, repairScript } from './repair/repair.ts';
export {
  type IterationRecord,
  MAX_ITERATIONS_PER_STEP,
  runScenario,
  type ScenarioDeps,
  type ScenarioResult,
  type ScenarioStatus,
  type StepReport,
} from './run-scenario.ts';
export { SCREENSHOT_BUDGET_PER_STEP, VISION_MODES, type VisionMode } from './som-mode.ts';
export {
  needsVerification,
  parseScenario,
  parseScenarioText,
  type Scenario,
  ScenarioError,
  ScenarioSchema,
  type ScenarioStep,
  scenarioJsonSchema,
} from './spec.ts';
export { judgeVerification, runVerification } from './verify.ts';
