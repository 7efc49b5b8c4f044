import type { SearchMetadata } from '../search/pipeline';

/**
 * What an answer is: prose, and citations that jump to exact lines, each checked against the
 * code the answer was written from. The same shape for every mode and for the no-model answer.
 */
export type AnswerMode = 'fast' | 'thinking' | 'deep';
export const ANSWER_MODES = ['fast', 'thinking', 'deep'] as const satisfies readonly AnswerMode[];

export interface Citation {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly why: string;
}

/** A piece of code the answer may cite: shown to the model with its line numbers. */
export interface Evidence {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  /** The text as shown: a heading and numbered lines. */
  readonly text: string;
  readonly tokens: number;
  /** Where it came from: the first retrieval, a gap lookup, a tool call, a session's cache. */
  readonly source: 'search' | 'gap' | 'tool' | 'session' | 'function' | 'attachment';
  readonly why?: string;
}

export interface CgragReport {
  readonly passesUsed: number;
  readonly gapsIdentified: readonly string[];
  readonly gapsResolved: readonly string[];
  readonly gapsUnresolved: readonly string[];
  readonly sessionId: string;
  readonly contextFromCache: boolean;
  readonly stoppedBecause: 'no_gaps' | 'all_unresolvable' | 'max_passes' | 'budget';
}

export interface AgentStep {
  readonly iteration: number;
  readonly tool: string;
  readonly input: unknown;
  /** The first lines of what the tool returned. */
  readonly summary: string;
  readonly cached: boolean;
}

/** A step as one line for people: the tool, its input, and whether the result was reused. */
export function describeStep(step: AgentStep): string {
  return `${step.tool} ${JSON.stringify(step.input)}${step.cached ? ' (cached)' : ''}`;
}

export interface AgentReport {
  readonly iterations: number;
  readonly toolCalls: number;
  readonly steps: readonly AgentStep[];
}

export interface AnswerMetadata {
  /** The model that wrote the answer, or null for the evidence-only answer. */
  readonly model: { readonly backend: string; readonly name: string } | null;
  readonly search: SearchMetadata | null;
  readonly citationsDropped: number;
  readonly evidence: number;
  readonly cgrag?: CgragReport;
  readonly agent?: AgentReport;
  /** Long functions whose whole body was read for this answer. */
  readonly escalations?: readonly string[];
  readonly notices: readonly string[];
  readonly durationMs: number;
}

export interface Answer {
  readonly answer: string;
  readonly confidence: number;
  readonly citations: readonly Citation[];
  readonly followUps: readonly string[];
  readonly mode: AnswerMode;
  /** True when no model wrote it: the ranked evidence and facts, stated as such. */
  readonly evidenceOnly: boolean;
  readonly metadata: AnswerMetadata;
}
