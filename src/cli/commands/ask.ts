import type { AskRequest } from '../../engine/answer/answerer';
import {
  ANSWER_MODES,
  describeStep,
  type Answer,
  type AnswerMode,
} from '../../engine/answer/model';
import { logHub } from '../../engine/log/logger';
import { PrettySink } from '../../engine/log/sinks';
import {
  ENGINE_FLAGS,
  logLevel,
  parse,
  questionArgument,
  resolvedEngineOptions,
  UsageError,
} from '../args';
import type { LlmClient } from '../../engine/llm/client';
import type { EmbeddingStatus } from '../../engine/embed/embedder';
import { describeEmbedding, json, note, out } from '../output';
import { ensureIndexed, llmFromFlags, unwrapOrThrow, withEngine } from '../session';

export const ASK_HELP = `code-oracle ask DIR "question"|- [--mode fast|thinking|deep] [--provider anthropic|ollama|openai|none]
                 [--llm-model NAME] [--base-url URL] [--session ID] [--no-summaries] [--json] [--debug-query]
                 [--store DIR] [--model …]
  Answers the question with prose and citations (path:start-end), streaming the answer as it is
  written. fast: one search, one model call; thinking: the model names what is missing and it is
  looked up, up to three passes (--session continues a conversation); deep: a research agent with
  tools. Without a model (the default: nothing leaves the machine) the answer is the evidence found,
  stated as such. The provider and model come from the flags or CODE_ORACLE_LLM_PROVIDER,
  CODE_ORACLE_LLM_MODEL, CODE_ORACLE_LLM_BASE_URL, and the key from ANTHROPIC_API_KEY or
  CODE_ORACLE_LLM_API_KEY. With a model, long functions are summarised while indexing unless
  --no-summaries. --model names the embedding model, as for index. Indexes DIR first when needed. A question of -
  is read from standard input. When the configured model cannot answer (no server, no key), the
  evidence is printed and the exit code is 1.`;

export async function askCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    ...ENGINE_FLAGS,
    mode: { type: 'string' },
    provider: { type: 'string' },
    'llm-model': { type: 'string' },
    'base-url': { type: 'string' },
    session: { type: 'string' },
    'no-summaries': { type: 'boolean' },
    'debug-query': { type: 'boolean' },
    web: { type: 'string' },
  });
  if (positionals.length !== 2) throw new UsageError('ask needs a folder and a question');
  const mode = (values.mode ?? 'fast') as AnswerMode;
  if (!ANSWER_MODES.includes(mode))
    throw new UsageError(`--mode must be fast, thinking or deep, got "${values.mode}"`);
  const llm = llmFromFlags(values);
  if (!llm && mode !== 'fast')
    note(
      `note: --mode ${mode} needs a language model and none is configured (--provider, CODE_ORACLE_LLM_PROVIDER): answering in fast mode with the evidence found.`,
    );
  const debug = values['debug-query'] === true;
  const question = await questionArgument(positionals[1]!);
  const resolved = await resolvedEngineOptions('query', positionals[0]!, values);
  const options = {
    ...resolved.options,
    ...(llm && !values['no-summaries'] ? { summarizer: llm } : {}),
  };
  await withEngine(
    options,
    debug ? 'error' : logLevel(values['log-level'], 'error'),
    async (engine) => {
      await ensureIndexed(engine, resolved.build);
      const trace = debug ? logHub.addSink(new PrettySink('debug')) : undefined;
      const stream = values.json ? null : new AnswerStream();
      const controller = new AbortController();
      const cancel = () => controller.abort();
      process.once('SIGINT', cancel);
      try {
        const request: AskRequest = {
          question,
          mode: llm ? mode : 'fast',
          llm,
          signal: controller.signal,
          ...(values.session ? { sessionId: values.session } : {}),
          ...(values.web ? { webSearchUrl: values.web } : {}),
          ...(stream
            ? {
                onText: (text: string) => stream.update(text),
                onStep: (step) => note(`  · ${describeStep(step)}`),
              }
            : {}),
        };
        const answer = unwrapOrThrow(await engine.ask(request));
        if (values.json) json({ ...answer, embedding: engine.embedding });
        else {
          stream!.finish(answer.answer);
          printAfterAnswer(answer, engine.embedding, llm);
        }
        if (llm && answer.evidenceOnly) throw new ModelUnreachable(modelFailure(llm, answer));
      } finally {
        process.removeListener('SIGINT', cancel);
        trace?.dispose();
      }
    },
  );
}

/** Prints the answer as the model writes it: only what is new, starting over if the model does. */
class AnswerStream {
  private printed = '';

  update(textSoFar: string): void {
    if (!textSoFar.startsWith(this.printed)) {
      out('\n(the model is correcting its answer)\n');
      this.printed = '';
    }
    process.stdout.write(textSoFar.slice(this.printed.length));
    this.printed = textSoFar;
  }

  finish(answer: string): void {
    if (!this.printed) process.stdout.write(answer);
    else if (answer.startsWith(this.printed))
      process.stdout.write(answer.slice(this.printed.length));
    process.stdout.write('\n');
  }
}

/** A configured model that wrote nothing: the evidence was shown, the command still failed. */
class ModelUnreachable extends Error {}

const MODEL_FAILURE =
  /^The model could not answer \((.*)\) — showing the evidence found instead\.$/s;

function modelFailure(llm: LlmClient, answer: Answer): string {
  const reason =
    answer.metadata.notices.map((notice) => MODEL_FAILURE.exec(notice)?.[1]).find(Boolean) ??
    'it gave no answer';
  const hint =
    llm.backend === 'openai-compatible' && /request to the model server/i.test(reason)
      ? ' Is the server (Ollama, LM Studio, llama.cpp) running at that address?'
      : '';
  return `the configured model (${llm.backend} ${llm.model}) could not answer: ${reason}${hint} Only the evidence found was shown.`;
}

function printAfterAnswer(answer: Answer, embedding: EmbeddingStatus, llm: LlmClient | null): void {
  if (answer.citations.length) {
    out('\nSources:');
    answer.citations.forEach((citation, i) =>
      out(
        `  ${i + 1}. ${citation.path}:${citation.startLine}-${citation.endLine}  ${citation.why}`,
      ),
    );
  }
  if (answer.followUps.length)
    out(
      `\nYou might ask next:\n${answer.followUps.map((question) => `  - ${question}`).join('\n')}`,
    );
  const { metadata } = answer;
  const parts = [
    `${answer.mode} mode`,
    metadata.model
      ? `${metadata.model.backend} ${metadata.model.name}`
      : llm
        ? `${llm.backend} ${llm.model} did not answer`
        : 'no model',
    `confidence ${answer.confidence.toFixed(2)}`,
  ];
  if (metadata.citationsDropped)
    parts.push(
      `${metadata.citationsDropped} citation${metadata.citationsDropped === 1 ? '' : 's'} outside the evidence dropped`,
    );
  if (metadata.cgrag)
    parts.push(
      `${metadata.cgrag.passesUsed} pass${metadata.cgrag.passesUsed === 1 ? '' : 'es'}, gaps ${metadata.cgrag.gapsResolved.length}/${metadata.cgrag.gapsIdentified.length} found, session ${metadata.cgrag.sessionId}`,
    );
  if (metadata.agent)
    parts.push(`${metadata.agent.iterations} iterations, ${metadata.agent.toolCalls} tool calls`);
  parts.push(embedding.available ? `embeddings ${embedding.modelId}` : 'no embeddings');
  out(`\n${parts.join(' · ')}`);
  if (embedding.note || !embedding.available) note(`note: ${describeEmbedding(embedding)}`);
  for (const notice of metadata.notices) if (!MODEL_FAILURE.test(notice)) note(`note: ${notice}`);
}
