import { z } from 'zod';
import { ELEMENT_METHODS } from '../actions/types.ts';

/** What the model answers for `act`: one element, one method. */
export const ActReply = z.object({
  elementId: z.number().int().nullable().describe('id from the outline, or null when nothing fits'),
  method: z.enum(ELEMENT_METHODS),
  arguments: z.array(z.string()),
  twoStep: z
    .boolean()
    .describe('true when this click opens a custom dropdown whose option must be chosen next'),
  reason: z.string().describe('a few words on why'),
});
export type ActReply = z.infer<typeof ActReply>;

export const ObserveReply = z.object({
  elements: z.array(
    z.object({
      elementId: z.number().int(),
      description: z.string(),
      method: z.enum(ELEMENT_METHODS),
      arguments: z.array(z.string()),
    }),
  ),
});
export type ObserveReply = z.infer<typeof ObserveReply>;

/** The caller's schema wrapped with the "have I got everything?" flag, so chunking needs no extra call. */
export const extractReply = <T extends z.ZodType>(data: T) =>
  z.object({
    data,
    done: z.boolean(),
  });
