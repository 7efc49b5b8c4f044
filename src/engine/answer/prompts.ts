/**
 * The prompts answers are written with. The context always shows code as a heading
 * `### path:start-end (kind name)` followed by numbered lines `NN | code`, so a model can cite
 * exact lines, and the citations can be checked against what was shown.
 */
const CITATION_RULES = `Rules:
- Use only the code in the context. Do not rely on memory of other versions of this code.
- Cite the lines your answer rests on: "path" exactly as written in a context heading, "startLine"
  and "endLine" among that piece's numbered lines. Never cite a line that is not shown.
- Prefer a few precise citations (the raise, the call, the assignment) over whole files.
- If the context does not hold the answer, say so plainly and keep confidence low.
- confidence: about 0.9 when the cited code settles the question, 0.5 when it settles part of it,
  below 0.3 when you are inferring.
- followUps: two or three questions the user might ask next about this code.
- Write the answer in Markdown; name functions and files as \`code\`.`;

export const ANSWER_SYSTEM_PROMPT = `You answer a developer's question about their codebase.
${CITATION_RULES}`;

export const GAP_SYSTEM_PROMPT = `You answer a developer's question about their codebase. The context may be incomplete.
${CITATION_RULES}
- Answer as well as you can with the context, then list in "missing" the code that would make the
  answer more complete, one item each, in these forms when you can:
    "get_db in api/deps.py"          (a definition in a file)
    "resolve_path()"                 (a function or method by name)
    "api/deps.py"                    (a whole file)
    "the code that handles uploads"  (a description, when you cannot name it)
  Leave "missing" empty when the context is enough. Do not ask again for code you were told cannot be found.`;

export const FOCUSED_FUNCTION_PROMPT = `You answer a developer's question about one long function, shown whole with numbered lines.
${CITATION_RULES}`;

export function contextBlock(
  question: string,
  context: string,
  notes: readonly string[] = [],
): string {
  return [
    `## Question\n${question}`,
    `## Context\n${context || '(no code was found)'}`,
    ...(notes.length ? [`## Notes\n${notes.map((note) => `- ${note}`).join('\n')}`] : []),
  ].join('\n\n');
}
