export { type JudgeOptions, judgeSample } from './judge.ts';
export {
  JUDGE_FILE,
  JudgeError,
  judgeStoredSample,
  judgeTaskFromSpec,
  loadJudgeInput,
} from './sample-evidence.ts';
export type { Blocker, JudgeInput, JudgeTask, KeyPointVerdict, Verdict } from './types.ts';
