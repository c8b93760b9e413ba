import { countTokens } from 'gpt-tokenizer';

/** Which tokenizer the figures use; printed with the results. */
export const TOKENIZER = 'o200k_base via gpt-tokenizer';

/** Real token count of a text (o200k_base, the GPT-4o / GPT-4.1 / o-series encoding). */
export const tokens = (text: string): number => countTokens(text);
