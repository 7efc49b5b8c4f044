import type { ConversationMessage, LlmClient, ToolCall } from '../llm/client';
import { getLogger } from '../log/logger';
import { ok, type Result } from '../util/result';
import type { AgentReport, AgentStep, Evidence } from './model';
import { ANSWER_SYSTEM_PROMPT } from './prompts';
import { ModelAnswer } from './schemas';
import type { AnswerSources } from './sources';
import { AGENT_TOOLS, repositoryMap, runTool, type ToolOutput } from './tools';
import { WorkspaceFiles } from './workspace-files';
import { writeAnswer, type Written } from './write';

/**
 * Deep mode: a research agent. The model sees the repository map and calls
 * tools for up to 13 iterations; the last two are for synthesis, with tools withdrawn. Every tool
 * result carries a note of the budget left; a hint suggests resolve_symbol if it is still unused
 * at iteration 5; searches close to an earlier one (Jaccard ≥ 0.8 on their words) are answered
 * from a per-run cache, files from a per-run file cache. Every step is kept as evidence, and the
 * final answer is written from that evidence with checked citations.
 */
export const MAX_ITERATIONS = 15;
export const SYNTHESIS_ITERATIONS = 2;
const HINT_AT = 5;
const RESULT_CHARS = 15_000;
const MAP_CHARS = 12_000;
const QUERY_SIMILARITY = 0.8;
const FINAL_EVIDENCE_TOKENS = 12_000;

const log = getLogger('answer.agent');

export const SYNTHESIZE_NOW =
  'You have gathered enough evidence. Synthesize your answer now. No more tool calls are available.';
export const RESOLVE_SYMBOL_HINT =
  'Hint: resolve_symbol follows definitions, references, callers and callees exactly; use it to trace calls instead of searching for names.';

export interface AgentInput {
  readonly sources: AnswerSources;
  readonly llm: LlmClient;
  readonly question: string;
  readonly onText?: (textSoFar: string) => void;
  readonly onStep?: (step: AgentStep) => void;
  readonly signal?: AbortSignal;
}

export interface AgentOutcome {
  readonly written: Written<ModelAnswer>;
  readonly evidence: readonly Evidence[];
  readonly report: AgentReport;
}

export function agentSystemPrompt(map: string): string {
  return `You are a codebase research agent. You answer a developer's question by researching the code with tools.

## Repository map
${map.length > MAP_CHARS ? `${map.slice(0, MAP_CHARS)}\n… (map cut; use read_map with a folder for the rest)` : map}

## Tools
- search_code(query): hybrid search; start here to find where things are.
- resolve_symbol(symbol_name, action): definition, references, callers or callees of a symbol, exactly.
- read_file(path, start_line?, end_line?): the file's lines with numbers; read what you will cite.
- read_map(path?): the tree with one-line summaries.

## Strategy
Search first, then resolve_symbol to navigate, then read_file for detail, then answer.

## Budget
You have ${MAX_ITERATIONS} iterations. Use 8-10 for research, then stop calling tools and write what you found.`;
}

export async function runAgent(input: AgentInput): Promise<Result<AgentOutcome>> {
  const { sources, llm, question } = input;
  const files = new WorkspaceFiles(sources.root);
  const queries: { words: Set<string>; output: ToolOutput }[] = [];
  const steps: AgentStep[] = [];
  const evidence: Evidence[] = [];
  const messages: ConversationMessage[] = [{ role: 'user', content: question }];
  const system = agentSystemPrompt(repositoryMap(sources));
  let usedResolve = false;
  let toolCalls = 0;
  let notes = '';
  let iteration = 0;
  for (; iteration < MAX_ITERATIONS; iteration++) {
    const synthesis = iteration >= MAX_ITERATIONS - SYNTHESIS_ITERATIONS;
    if (iteration === MAX_ITERATIONS - SYNTHESIS_ITERATIONS)
      messages.push({ role: 'user', content: SYNTHESIZE_NOW });
    const turn = await llm.converse({
      system,
      messages,
      tools: synthesis ? [] : AGENT_TOOLS,
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (!turn.ok) return turn;
    messages.push({ role: 'assistant', content: turn.value.text, toolCalls: turn.value.toolCalls });
    if (!turn.value.toolCalls.length || synthesis) {
      notes = turn.value.text;
      break;
    }
    const results = [];
    for (const call of turn.value.toolCalls) {
      toolCalls++;
      usedResolve ||= call.name === 'resolve_symbol';
      const { output, cached } = await execute(call, sources, files, queries);
      evidence.push(...output.evidence);
      const step: AgentStep = {
        iteration: iteration + 1,
        tool: call.name,
        input: call.input,
        summary: output.text.split('\n').slice(0, 3).join('\n'),
        cached,
      };
      steps.push(step);
      input.onStep?.(step);
      const hint = !usedResolve && iteration + 1 >= HINT_AT ? `\n${RESOLVE_SYMBOL_HINT}` : '';
      results.push({
        callId: call.id,
        name: call.name,
        content: `${truncate(output.text)}\n${budgetNote(iteration + 1, toolCalls)}${hint}`,
        ...(output.isError ? { isError: true } : {}),
      });
    }
    messages.push({ role: 'tool', results });
    log.info('agent_iteration', {
      iteration: iteration + 1,
      tool_calls: turn.value.toolCalls.map((call) => call.name),
      evidence: evidence.length,
    });
  }
  const shown = latestWithin(evidence, FINAL_EVIDENCE_TOKENS);
  const written = await writeAnswer({
    llm,
    system: ANSWER_SYSTEM_PROMPT,
    question,
    context: shown.map((piece) => piece.text).join('\n\n'),
    evidence: shown,
    schema: ModelAnswer,
    schemaName: 'Answer',
    notes: notes ? [`Your research notes: ${notes.slice(0, 4000)}`] : [],
    ...(input.onText ? { onText: input.onText } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  if (!written.ok) return written;
  const report: AgentReport = {
    iterations: Math.min(iteration + 1, MAX_ITERATIONS),
    toolCalls,
    steps,
  };
  log.info('agent_completed', {
    iterations: report.iterations,
    tool_calls: toolCalls,
    evidence: shown.length,
    used_resolve_symbol: usedResolve,
  });
  return ok({ written: written.value, evidence: shown, report });
}

async function execute(
  call: ToolCall,
  sources: AnswerSources,
  files: WorkspaceFiles,
  queries: { words: Set<string>; output: ToolOutput }[],
): Promise<{ output: ToolOutput; cached: boolean }> {
  if (
    call.name === 'search_code' &&
    typeof (call.input as { query?: unknown })?.query === 'string'
  ) {
    const words = wordsOf((call.input as { query: string }).query);
    const similar = queries.find((entry) => jaccard(entry.words, words) >= QUERY_SIMILARITY);
    if (similar) {
      log.info('agent_query_cache_hit', { query: (call.input as { query: string }).query });
      return { output: similar.output, cached: true };
    }
    const output = await runTool(call.name, call.input, sources, files);
    queries.push({ words, output });
    return { output, cached: false };
  }
  return { output: await runTool(call.name, call.input, sources, files), cached: false };
}

/** The note closing every tool result: how far the budget has gone, and what to do about it. */
export function budgetNote(iteration: number, toolCalls: number): string {
  const remaining = MAX_ITERATIONS - SYNTHESIS_ITERATIONS - iteration;
  const base = `[Iteration ${iteration}/${MAX_ITERATIONS}, ${toolCalls} tool call${toolCalls === 1 ? '' : 's'} used`;
  if (remaining <= 1) return `${base} — stop researching and synthesize your answer NOW]`;
  if (remaining <= 5) return `${base} — start wrapping up research]`;
  return `${base}]`;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (!a.size && !b.size) return 1;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}

function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);
}

function truncate(text: string): string {
  return text.length > RESULT_CHARS
    ? `${text.slice(0, RESULT_CHARS)}\n… (result cut at ${RESULT_CHARS} characters)`
    : text;
}

/** The most recent evidence that fits the budget, without repeats, in the order it was found. */
function latestWithin(evidence: readonly Evidence[], budget: number): Evidence[] {
  const kept: Evidence[] = [];
  let used = 0;
  for (let i = evidence.length - 1; i >= 0; i--) {
    const piece = evidence[i]!;
    if (
      kept.some(
        (other) =>
          other.path === piece.path &&
          other.startLine <= piece.startLine &&
          piece.endLine <= other.endLine,
      )
    )
      continue;
    if (used + piece.tokens > budget) continue;
    kept.unshift(piece);
    used += piece.tokens;
  }
  return kept;
}
