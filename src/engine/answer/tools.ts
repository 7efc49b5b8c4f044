import { z } from 'zod';
import type { CodeGraph } from '../graph/code-graph';
import type { ToolSpec } from '../llm/client';
import { getLogger } from '../log/logger';
import {
  callerSummary,
  resolveSymbol,
  SYMBOL_ACTIONS,
  traceCallers,
  type CallerTreeNode,
  type SymbolLocation,
} from '../resolve/symbols';
import { countTokens } from '../search/context';
import type { Evidence } from './model';
import { numberedEvidence } from './snippets';
import { citableItems, type AnswerSources } from './sources';
import type { WorkspaceFiles } from './workspace-files';

/**
 * The deep agent's tools: search_code, resolve_symbol, read_file, read_map.
 * Each validates its input, returns text for the model and the code it showed as evidence.
 */
export const SearchCodeInput = z.object({
  query: z.string().min(1).describe('What to look for: words, names, an error message'),
});
export const ResolveSymbolInput = z.object({
  symbol_name: z
    .string()
    .min(1)
    .describe('A name such as create_user, UserService.create or path.py:42'),
  action: z
    .enum(SYMBOL_ACTIONS as [string, ...string[]])
    .describe('definition, references, callers or callees'),
});
export const ReadFileInput = z.object({
  path: z.string().min(1).describe('A path relative to the workspace'),
  start_line: z.number().int().min(1).optional(),
  end_line: z.number().int().min(1).optional(),
});
export const ReadMapInput = z.object({
  path: z.string().optional().describe('A folder to show; the whole tree when absent'),
});
export const TraceCallersInput = z.object({
  symbol_name: z
    .string()
    .min(1)
    .describe('A name such as create_user, UserService.create or path.py:42'),
  depth: z.number().int().min(1).max(8).optional().describe('How many hops of callers (default 3)'),
});

export const AGENT_TOOLS: readonly ToolSpec[] = [
  {
    name: 'search_code',
    description:
      'Hybrid (lexical + semantic) search over the indexed code. Returns up to 10 places with path:start-end, why they match and a preview.',
    schema: SearchCodeInput,
  },
  {
    name: 'resolve_symbol',
    description:
      "Navigate the code graph exactly: a symbol's definition, references, callers or callees, as path:line locations.",
    schema: ResolveSymbolInput,
  },
  {
    name: 'read_file',
    description:
      'Read a file of the workspace with line numbers (the first 200 lines unless start_line/end_line say otherwise).',
    schema: ReadFileInput,
  },
  {
    name: 'read_map',
    description: 'The folder tree with a one-line summary of every indexed file.',
    schema: ReadMapInput,
  },
];

/** Tools the editor offers to other agents (VS Code's language-model tools): the agent's search and navigation, and the callers tree. */
export const EDITOR_TOOLS: readonly ToolSpec[] = [
  AGENT_TOOLS[0]!,
  AGENT_TOOLS[1]!,
  {
    name: 'trace_callers',
    description:
      'The multi-hop tree of who calls a function or method, with path:line of every call.',
    schema: TraceCallersInput,
  },
];

export interface ToolOutput {
  readonly text: string;
  readonly evidence: readonly Evidence[];
  readonly isError?: boolean;
}

export const READ_FILE_DEFAULT_LINES = 200;
const SEARCH_RESULTS = 10;
const PREVIEW_LINES = 8;
const EVIDENCE_TOKENS = 4000;

const log = getLogger('answer.tools');

export async function runTool(
  name: string,
  input: unknown,
  sources: AnswerSources,
  files: WorkspaceFiles,
): Promise<ToolOutput> {
  const run = Object.hasOwn(TOOL_RUNNERS, name) ? TOOL_RUNNERS[name] : undefined;
  if (!run)
    return {
      text: `There is no tool named ${name}. The tools are ${AGENT_TOOLS.map((tool) => tool.name).join(', ')}.`,
      evidence: [],
      isError: true,
    };
  return run(name, input, sources, files);
}

type ToolRunner = (
  name: string,
  input: unknown,
  sources: AnswerSources,
  files: WorkspaceFiles,
) => Promise<ToolOutput>;

/** Binds a tool's schema to what the tool does, so its input is validated once and arrives typed. */
function validated<T>(
  schema: z.ZodType<T>,
  run: (
    input: T,
    sources: AnswerSources,
    files: WorkspaceFiles,
  ) => ToolOutput | Promise<ToolOutput>,
): ToolRunner {
  return async (name, input, sources, files) => {
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      log.warn('tool_input_invalid', { tool: name, error: z.prettifyError(parsed.error) });
      return {
        text: `Invalid input for ${name}: ${z.prettifyError(parsed.error)}`,
        evidence: [],
        isError: true,
      };
    }
    return run(parsed.data, sources, files);
  };
}

const TOOL_RUNNERS: Readonly<Record<string, ToolRunner>> = {
  search_code: validated(SearchCodeInput, ({ query }, sources) => searchCode(query, sources)),
  resolve_symbol: validated(ResolveSymbolInput, ({ symbol_name, action }, sources) =>
    symbol(sources.graph, symbol_name, action as (typeof SYMBOL_ACTIONS)[number]),
  ),
  read_file: validated(ReadFileInput, (input, _sources, files) => readFile(input, files)),
  read_map: validated(ReadMapInput, ({ path }, sources) => ({
    text: repositoryMap(sources, path),
    evidence: [],
  })),
  trace_callers: validated(TraceCallersInput, ({ symbol_name, depth }, sources) => ({
    text: callersText(sources.graph, symbol_name, depth ?? 3),
    evidence: [],
  })),
};

async function searchCode(query: string, sources: AnswerSources): Promise<ToolOutput> {
  const result = await sources.search({ query, mode: 'fast' });
  if (!result.ok) return { text: result.error.message, evidence: [], isError: true };
  const items = citableItems(result.value.context).slice(0, SEARCH_RESULTS);
  if (!items.length) return { text: `No code matches "${query}".`, evidence: [] };
  const evidence: Evidence[] = [];
  const blocks: string[] = [];
  for (const item of items) {
    const span = result.value.spans.find(
      (candidate) =>
        candidate.path === item.path &&
        candidate.startLine === item.startLine &&
        candidate.endLine === item.endLine,
    );
    const lines = item.text.split('\n');
    const preview = lines.slice(1, 1 + PREVIEW_LINES);
    const shownEnd = item.startLine + preview.length - 1;
    blocks.push(
      `${item.path}:${item.startLine}-${item.endLine} — ${span?.why ?? item.level}\n${preview.join('\n')}${lines.length > 1 + PREVIEW_LINES ? '\n…' : ''}`,
    );
    // Only the previewed lines were seen, so only they may be cited.
    const numbered = preview.filter((line) => /^\s*\d+ \| /.test(line));
    // counted like every other piece of evidence, so the agent's evidence budget adds like with like
    if (numbered.length)
      evidence.push({
        path: item.path,
        startLine: item.startLine,
        endLine: Math.min(item.endLine, shownEnd),
        text: `### ${item.path}:${item.startLine}-${Math.min(item.endLine, shownEnd)}\n${numbered.join('\n')}`,
        tokens: await countTokens(numbered.join('\n')),
        source: 'tool',
      });
  }
  return { text: blocks.join('\n\n'), evidence };
}

function symbol(
  graph: CodeGraph,
  name: string,
  action: (typeof SYMBOL_ACTIONS)[number],
): ToolOutput {
  const found = resolveSymbol(graph, name, action);
  if (!found.ok) return { text: found.error.message, evidence: [] };
  const where = (location: SymbolLocation) => `${location.path}:${location.startLine}`;
  const lines: string[] = [];
  for (const result of found.value) {
    lines.push(
      `${result.symbol.kind} ${result.symbol.qualifiedName} — defined at ${where(result.symbol)}: ${result.symbol.signature}`,
    );
    for (const reference of result.references ?? [])
      lines.push(
        `  referenced (${reference.kind}) at ${reference.path}:${reference.line}${reference.from ? ` in ${reference.from.qualifiedName}` : ''}`,
      );
    if (result.counts) lines.push(`  ${callerSummary(result.counts)}`);
    for (const caller of [...(result.callers ?? []), ...(result.valueReferences ?? [])])
      lines.push(
        `  ${caller.kind === 'value' ? 'passed as a value' : 'called'} at ${caller.path}:${caller.line}${caller.from ? ` by ${caller.from.qualifiedName}` : ''}`,
      );
    for (const call of result.possible ?? [])
      lines.push(
        `  possibly called at ${call.path}:${call.line}${call.from ? ` by ${call.from.qualifiedName}` : ''} (${call.reason})`,
      );
    for (const callee of result.callees ?? [])
      lines.push(
        `  calls ${callee.target.qualifiedName} (${where(callee.target)}) at line ${callee.line}`,
      );
  }
  return {
    text: `${action} of "${name}" (${found.value.length} definition${found.value.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    evidence: [],
  };
}

async function readFile(
  input: z.infer<typeof ReadFileInput>,
  files: WorkspaceFiles,
): Promise<ToolOutput> {
  const read = await files.lines(input.path);
  if (!read.ok) return { text: read.error.message, evidence: [], isError: true };
  const { lines, path } = read.value;
  const start = Math.min(Math.max(1, input.start_line ?? 1), lines.length);
  const end = Math.min(lines.length, input.end_line ?? start + READ_FILE_DEFAULT_LINES - 1);
  if (end < start)
    return {
      text: `${path} has ${lines.length} lines; nothing between ${start} and ${end}.`,
      evidence: [],
      isError: true,
    };
  const shown = lines.slice(start - 1, end).map((text, i) => ({ line: start + i, text }));
  const piece = await numberedEvidence(path, 'file', shown, EVIDENCE_TOKENS * 4, 'tool');
  const more =
    end < lines.length
      ? `\n(lines ${end + 1}-${lines.length} not shown; ask with start_line to read on)`
      : '';
  return {
    text: `File: ${path} (lines ${start}-${end} of ${lines.length})\n${piece?.text.split('\n').slice(1).join('\n') ?? ''}${more}`,
    evidence: piece ? [piece] : [],
  };
}

/** The callers tree as indented text, each caller with the lines where it makes the call. */
function callersText(graph: CodeGraph, name: string, depth: number): string {
  const traced = traceCallers(graph, name, depth);
  if (!traced.ok) return traced.error.message;
  const lines: string[] = [];
  const walk = (node: CallerTreeNode, level: number) => {
    const sites = node.callSites.map((site) => `${site.path}:${site.line}`).join(', ');
    lines.push(
      `${'  '.repeat(level)}${level ? '← ' : ''}${node.symbol.qualifiedName} (${level ? `calls at ${sites}` : `${node.symbol.path}:${node.symbol.startLine}`})${node.truncated === 'cycle' ? ' [recursive]' : node.truncated === 'depth' ? ' [more callers beyond this depth]' : ''}`,
    );
    for (const caller of node.callers) walk(caller, level + 1);
  };
  for (const root of traced.value) {
    walk(root, 0);
    if (root.counts) lines.push(`  (${callerSummary(root.counts)})`);
    for (const call of root.possible ?? [])
      lines.push(`  ? possibly at ${call.path}:${call.line} (${call.reason})`);
  }
  return lines.join('\n');
}

/** The tree of indexed files with one line each: the module's docstring, or what it defines. */
export function repositoryMap(sources: Pick<AnswerSources, 'graph'>, under?: string): string {
  const prefix = under?.replace(/^\.?\/?/, '').replace(/\/?$/, '/') ?? '';
  const files = [...sources.graph.files()]
    .filter((file) => !prefix || prefix === '/' || file.startsWith(prefix))
    .sort();
  if (!files.length)
    return under ? `No indexed files under ${under}.` : 'The index holds no files.';
  const lines: string[] = [];
  let previousFolders: string[] = [];
  for (const file of files) {
    const parts = file.split('/');
    const folders = parts.slice(0, -1);
    let shared = 0;
    while (shared < folders.length && folders[shared] === previousFolders[shared]) shared++;
    for (let depth = shared; depth < folders.length; depth++)
      lines.push(`${'  '.repeat(depth)}${folders[depth]}/`);
    lines.push(
      `${'  '.repeat(folders.length)}${parts[parts.length - 1]} — ${fileSummary(sources.graph, file)}`,
    );
    previousFolders = folders;
  }
  return lines.join('\n');
}

function fileSummary(graph: CodeGraph, file: string): string {
  const facts = graph.factsInFile(file);
  const doc = facts
    .find((fact) => fact.kind === 'module')
    ?.docstring?.split('\n')[0]
    ?.trim();
  const names = facts
    .filter((fact) => fact.kind !== 'module' && fact.parent === null)
    .map((fact) => fact.name);
  const defines = names.length
    ? `defines ${names.slice(0, 6).join(', ')}${names.length > 6 ? ` and ${names.length - 6} more` : ''}`
    : 'no definitions';
  return doc ? `${doc.slice(0, 100)} (${defines})` : defines;
}
