/**
 * One shape for the three providers' computer-use tools. A provider adapter turns our turn (the goal,
 * the screenshot, what the last actions did) into its own wire format and its answer back into
 * provider-neutral coordinate actions in the pixels of the image it was sent. The conversation each
 * provider needs is plain JSON, so an agent's state can carry it between slices.
 */
import type { CoordinateAction } from '../../actions/coordinates.ts';
import type { Usage } from '../types.ts';

export type ComputerUseProvider = 'anthropic' | 'openai' | 'google';

export interface ComputerUseConfig {
  provider: ComputerUseProvider;
  model: string;
  apiKey?: string;
  baseURL?: string;
  /** Anthropic's tool version (`computer_20250124` or `computer_20251124`); chosen by model when absent. */
  toolVersion?: string;
  /** OpenAI: acknowledge the safety checks a computer_call carries (the operator's decision, off by default). */
  acknowledgeSafetyChecks?: boolean;
  timeoutMs?: number;
}

/** What the agent hands the model each turn. */
export interface TurnInput {
  /** The task, sent on the first turn. */
  goal: string;
  /** Instructions of ours (secrets as %name%, what `done` means); first turn only. */
  system: string;
  /** The current screenshot (base64) at `image` size. */
  screenshot: string;
  mediaType: 'image/png' | 'image/jpeg';
  image: { width: number; height: number };
  url: string;
  /** What the last turn's calls did, by call id; each gets the screenshot above as its result. */
  results: { callId: string; ok: boolean; message: string }[];
}

export interface ComputerCall {
  /** The provider's id for the call, answered with the next turn's screenshot. */
  callId: string;
  actions: CoordinateAction[];
  /** OpenAI: checks the operator must acknowledge before the call may run. */
  safetyChecks?: { id: string; code: string; message: string }[];
  /** The provider asked for something we do not do (named, so the model can be told). */
  unsupported?: string;
}

export interface Turn {
  calls: ComputerCall[];
  /** Text the model wrote (its final answer when there are no calls). */
  message: string;
  usage: Usage;
}

/** Plain JSON (what JSON.parse gives back): the shape each provider's conversation is kept in. */
export type ConversationData =
  | string
  | number
  | boolean
  | null
  | ConversationData[]
  | { [key: string]: ConversationData };

/** A provider's conversation so far, plain JSON (messages, or a response id kept by the provider). */
export type Conversation = { provider: ComputerUseProvider; data: ConversationData };

export interface ComputerUseModel {
  readonly config: ComputerUseConfig;
  /** Sends one turn; returns the model's calls and the conversation to keep. */
  turn(
    conversation: Conversation | undefined,
    input: TurnInput,
    signal?: AbortSignal,
  ): Promise<{ turn: Turn; conversation: Conversation }>;
}

/** Screenshots kept in a conversation at most: older ones are replaced by a note, to bound tokens. */
export const MAX_IMAGES_PER_REQUEST = 3;
