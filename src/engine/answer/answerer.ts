import type { LlmClient } from '../llm/client';
import { elapsedMs, getLogger } from '../log/logger';
import { withTrace } from '../log/trace';
import type { Attachment } from '../search/preprocess';
import type { SearchResult } from '../search/pipeline';
import { fail, ok, type Result } from '../util/result';
import { runAgent } from './agent';
import { runCgrag } from './cgrag';
import { escalateLongFunctions } from './escalate';
import { evidenceOnlyAnswer } from './evidence-only';
import type { AgentStep, Answer, AnswerMode, Citation, Evidence } from './model';
import { ANSWER_SYSTEM_PROMPT } from './prompts';
import { ModelAnswer } from './schemas';
import { SessionStore } from './sessions';
import { runTool, type ToolOutput } from './tools';
import { WorkspaceFiles } from './workspace-files';
import { attachmentLines, numberedEvidence } from './snippets';
import { contextText, evidenceOf, type AnswerSources } from './sources';
import { writeAnswer, type Written } from './write';

/**
 * Answers a question in one of three modes — fast (one retrieval, one call), thinking (CGRAG
 * passes over the gaps the model names) or deep (a tool-using research agent) — or, with no model
 * configured, with the evidence itself, labelled as such. A model that fails is reported and the
 * evidence shown instead; nothing is invented, every citation is checked.
 */
export interface AskRequest {
  readonly question: string;
  readonly mode?: AnswerMode;
  readonly llm?: LlmClient | null;
  /** Continues a thinking-mode conversation: its cached code is reused. */
  readonly sessionId?: string | null;
  readonly attachment?: Attachment;
  readonly webSearchUrl?: string | null;
  /** Receives the answer's text so far as the model writes it. */
  readonly onText?: (textSoFar: string) => void;
  /** Receives each research step of the deep agent. */
  readonly onStep?: (step: AgentStep) => void;
  readonly signal?: AbortSignal;
}

const log = getLogger('answer');

export class Answerer {
  private readonly sessions = new SessionStore();

  constructor(private readonly sources: AnswerSources) {}

  ask(request: AskRequest): Promise<Result<Answer>> {
    return withTrace(() => this.run(request));
  }

  /** Runs one of the research tools for another agent (the editor's language-model tools). */
  tool(name: string, input: unknown): Promise<ToolOutput> {
    return withTrace(() =>
      runTool(name, input, this.sources, new WorkspaceFiles(this.sources.root)),
    );
  }

  private async run(request: AskRequest): Promise<Result<Answer>> {
    const started = performance.now();
    const mode = request.mode ?? 'fast';
    if (!request.question.trim() && !request.attachment)
      return fail('invalid_input', 'The question is empty.');
    log.info('qa_started', {
      raw_query_length: request.question.length,
      mode,
      model: request.llm ? `${request.llm.backend}:${request.llm.model}` : null,
    });
    const answered = request.llm
      ? await this.withModel(request, request.llm, mode, started)
      : await this.withoutModel(request, mode, started, []);
    if (answered.ok) {
      const answer = answered.value;
      log.info('qa_completed', {
        mode,
        answer_confidence: answer.confidence,
        citations_count: answer.citations.length,
        citations_dropped: answer.metadata.citationsDropped,
        follow_up_count: answer.followUps.length,
        evidence_only: answer.evidenceOnly,
        total_duration_ms: elapsedMs(started),
      });
    } else log.warn('qa_failed', { mode, error: answered.error.message });
    return answered;
  }

  private async withModel(
    request: AskRequest,
    llm: LlmClient,
    mode: AnswerMode,
    started: number,
  ): Promise<Result<Answer>> {
    if (mode === 'deep') {
      const outcome = await runAgent({
        sources: this.sources,
        llm,
        question: request.question,
        ...optional(request),
      });
      if (!outcome.ok) return this.afterModelFailure(request, mode, started, outcome.error);
      const { written, evidence, report } = outcome.value;
      return ok(this.compose(written, evidence, mode, llm, null, started, { agent: report }));
    }
    const searched = await this.search(request, mode === 'thinking' ? llm : null);
    if (!searched.ok) return searched;
    const search = searched.value;
    // With attached code the model still has evidence: the attached lines.
    if (!evidenceOf(search.context).length && !request.attachment)
      return this.withoutModel(request, mode, started, [], search);
    const escalation = await escalateLongFunctions(
      this.sources,
      llm,
      request.question,
      search,
      request.signal,
    );
    const attached = request.attachment ? await attachmentEvidence(request.attachment) : null;
    if (attached) escalation.evidence.unshift(attached);
    if (mode === 'thinking') {
      const session = this.sessions.open(request.sessionId);
      const outcome = await runCgrag({
        sources: this.sources,
        llm,
        question: request.question,
        search,
        session,
        extra: escalation,
        ...optional(request),
      });
      if (!outcome.ok) return this.afterModelFailure(request, mode, started, outcome.error, search);
      const { written, evidence, report } = outcome.value;
      return ok(
        this.compose(written, evidence, mode, llm, search, started, {
          cgrag: report,
          escalations: escalation.functions,
        }),
      );
    }
    const evidence = [...evidenceOf(search.context), ...escalation.evidence];
    const written = await writeAnswer({
      llm,
      system: ANSWER_SYSTEM_PROMPT,
      question: request.question,
      context: contextText(search.context, escalation.evidence),
      evidence,
      schema: ModelAnswer,
      schemaName: 'Answer',
      notes: escalation.notes,
      ...optional(request),
    });
    if (!written.ok) return this.afterModelFailure(request, mode, started, written.error, search);
    return ok(
      this.compose(written.value, evidence, mode, llm, search, started, {
        escalations: escalation.functions,
      }),
    );
  }

  /** The evidence-only answer, optionally with a note on why no model wrote it. */
  private async withoutModel(
    request: AskRequest,
    mode: AnswerMode,
    started: number,
    notices: readonly string[],
    searched?: SearchResult,
    modelFailure?: string,
  ): Promise<Result<Answer>> {
    let search = searched;
    if (!search) {
      const result = await this.search(request, null);
      if (!result.ok) return result;
      search = result.value;
    }
    const answer = evidenceOnlyAnswer(
      request.question,
      search,
      this.sources,
      mode,
      elapsedMs(started),
      request.attachment,
      modelFailure,
    );
    return ok({
      ...answer,
      metadata: { ...answer.metadata, notices: [...notices, ...answer.metadata.notices] },
    });
  }

  /** A cancelled question stays cancelled; any other model failure shows the evidence instead. */
  private afterModelFailure(
    request: AskRequest,
    mode: AnswerMode,
    started: number,
    error: { code: string; message: string },
    search?: SearchResult,
  ): Promise<Result<Answer>> {
    if (error.code === 'cancelled') return Promise.resolve(fail('cancelled', error.message));
    log.warn('answer_model_failed', { mode, error: error.message });
    return this.withoutModel(
      request,
      mode,
      started,
      [`The model could not answer (${error.message}) — showing the evidence found instead.`],
      search,
      error.message,
    );
  }

  /**
   * A question about a place in a file the index does not hold (Explain this error on a JSON file,
   * say: the question names the attached file at a line) is answered from the attached lines alone;
   * whatever the search finds elsewhere in the code is unrelated to it.
   */
  private async search(request: AskRequest, llm: LlmClient | null): Promise<Result<SearchResult>> {
    const searched = await this.searchIndex(request, llm);
    if (
      !searched.ok ||
      !request.attachment ||
      !this.isAboutUnindexedPlace(request.question, request.attachment.path)
    )
      return searched;
    log.info('answer_from_attachment_alone', { path: request.attachment.path });
    return ok(withoutIndexedEvidence(searched.value, request.attachment.path));
  }

  private isAboutUnindexedPlace(question: string, attachedPath: string): boolean {
    if (!question.includes(`${attachedPath}:`)) return false;
    return !this.sources.catalog.hasFile(attachedPath);
  }

  private searchIndex(request: AskRequest, llm: LlmClient | null): Promise<Result<SearchResult>> {
    return this.sources.search({
      query: request.question,
      mode: llm ? 'thinking' : 'fast',
      llm,
      ...(request.attachment ? { attachment: request.attachment } : {}),
      ...(request.webSearchUrl ? { webSearchUrl: request.webSearchUrl } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
  }

  private compose(
    written: Written<ModelAnswer>,
    evidence: readonly Evidence[],
    mode: AnswerMode,
    llm: LlmClient,
    search: SearchResult | null,
    started: number,
    extra: Partial<Answer['metadata']>,
  ): Answer {
    const citations: Citation[] = written.citations;
    return {
      answer: written.raw.answer,
      confidence: written.confidence,
      citations,
      followUps: written.raw.followUps,
      mode,
      evidenceOnly: false,
      metadata: {
        model: { backend: llm.backend, name: llm.model },
        search: search?.metadata ?? null,
        citationsDropped: written.dropped,
        evidence: evidence.length,
        notices: search?.metadata.notices ?? [],
        durationMs: elapsedMs(started),
        ...extra,
      },
    };
  }
}

/** The search result without the index's evidence, saying why: the attachment is the evidence. */
function withoutIndexedEvidence(result: SearchResult, attachedPath: string): SearchResult {
  return {
    ...result,
    spans: [],
    context: { ...result.context, items: [], spans: [], tokens: 0 },
    metadata: {
      ...result.metadata,
      flow: null,
      findings: [],
      notices: [
        ...result.metadata.notices,
        `The index does not hold ${attachedPath}, so the answer uses the attached lines alone.`,
      ],
    },
  };
}

/** Attached code (a file, a selection, the code around an error) goes to the model as it is, citable. */
const ATTACHMENT_TOKENS = 3000;

async function attachmentEvidence(attachment: Attachment): Promise<Evidence | null> {
  return numberedEvidence(
    attachment.path,
    'attached by the user',
    attachmentLines(attachment),
    ATTACHMENT_TOKENS,
    'attachment',
  );
}

function optional(request: AskRequest): {
  onText?: (text: string) => void;
  onStep?: (step: AgentStep) => void;
  signal?: AbortSignal;
} {
  return {
    ...(request.onText ? { onText: request.onText } : {}),
    ...(request.onStep ? { onStep: request.onStep } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  };
}
