import { z } from 'zod';

/** The requests both provider suites send: a small structured question, with and without an image. */
export const Answer = z.object({
  elementId: z.number().int().nullable(),
  reason: z.string(),
  note: z.string().optional(),
});
export const ask = {
  system: 'Pick the element the instruction means.',
  messages: [{ role: 'user' as const, content: 'Instruction: go\nPage: [3] button: Go' }],
  schema: Answer,
  schemaName: 'pick',
};
// 1×1 PNG: the server reads its size to bill the image like the provider would.
export const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const withImage = {
  ...ask,
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'Which mark is the Go button?' },
        { type: 'image' as const, mediaType: 'image/png' as const, data: PNG },
      ],
    },
  ],
};
