import { z } from 'zod';

/**
 * What models must return, validated with zod (a failed validation is sent back to the model).
 * `answer` comes first so it can be streamed as it is written.
 */
export const ModelCitation = z.object({
  path: z.string().min(1).describe('The file path exactly as shown in a context heading'),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  why: z.string().describe('One sentence: what these lines show'),
});

export const ModelAnswer = z.object({
  answer: z.string().min(1).describe('The direct answer, 1–3 paragraphs of Markdown'),
  confidence: z.number().min(0).max(1),
  citations: z
    .array(ModelCitation)
    .describe('The lines the answer rests on, only from the context shown'),
  followUps: z.array(z.string()).max(5).describe('2–3 related questions the user might ask next'),
});
export type ModelAnswer = z.infer<typeof ModelAnswer>;

/** The thinking-mode answer: also what is missing from the context (empty when nothing is). */
export const GapAnswer = ModelAnswer.extend({
  missing: z
    .array(z.string())
    .max(8)
    .describe(
      'Code that would make the answer more complete, e.g. "get_db in api/deps.py", "resolve_path()", "the file that handles uploads"; empty if nothing is missing',
    ),
});
export type GapAnswer = z.infer<typeof GapAnswer>;
