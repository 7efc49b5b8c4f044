import { CHUNK_LEVELS, type SymbolFacts } from '../model';
import type { LlmClient } from '../llm/client';
import type { ChunkMeta } from '../store/tables';
import { elapsedMs, getLogger } from '../log/logger';
import { withTrace } from '../log/trace';
import type { RetrieverCalibration } from './calibration';
import { StoredTokenCounts } from './stored-counts';
import { ChunkTexts } from './chunk-texts';
import { buildContext, MODE_BUDGETS, type BudgetedContext } from './context';
import { evaluateRetrieval, searchWeb, type CragEvaluation, type WebResult } from './crag';
import { boostByGroup, computeTopK, weaveIn, weightedRrf, type RankedList } from './fusion';
import { classifyMode, type ModeDecision, type QueryMode } from './mode-router';
import {
  MAX_QUERY_CHARACTERS,
  preprocessQuery,
  QUERY_TAIL_CHARACTERS,
  queryTerms,
  type Attachment,
  type ParsedQuery,
} from './preprocess';
import {
  assignmentHits,
  lexicalHits,
  messageHits,
  pathHits,
  raiseHits,
  semanticHits,
  symbolHits,
  type Hit,
  type QuotedMessage,
  type RankedHits,
  type SearchIndex,
} from './retrievers';
import { inflectionStems, NearestWords, type SavedWordRows } from './expansion';
import {
  closestUnlisted,
  coverageScores,
  definingScores,
  pathScores,
  PathVocabulary,
  weighQuestionWords,
  wholeFileScores,
} from './file-evidence';
import { rankFiles, type FileDefinitions, type FileResult } from './files';
import { closeWordsFirst, ProximityQuery, wordPlaces, wordPlacesCache } from './proximity';
import {
  citableChunks,
  shapeSpans,
  type CitableChunk,
  type RankedChunk,
  type TextReach,
} from './shaping';
import { StageSwitches, type StageName } from './stages';
import type { Span } from './spans';
import {
  neighbourHits,
  neighbourSeeds,
  runStrategy,
  StructureCache,
  type StrategyResult,
} from './strategies';
import { scoreTechnicality, type Technicality } from './technicality';
import { VectorScan } from './vectors';

/** Fast mode asks no language model; thinking mode lets one classify the question. */
export type SearchMode = 'fast' | 'thinking';

/**
 * The retrieval pipeline: preprocess → technicality → mode routing → lexical,
 * semantic, symbol, error-anchor and path retrieval fused by weighted RRF → the mode's graph
 * strategy → correction (CRAG) → spans shaped to the evidence → a budgeted context. The result's
 * spans are exactly what the answering step shows a model.
 */
export interface SearchRequest {
  readonly query: string;
  readonly mode?: SearchMode;
  readonly llm?: LlmClient | null;
  readonly attachment?: Attachment;
  readonly budgetTokens?: number;
  /** A SearXNG endpoint; web search is off unless the user set one. */
  readonly webSearchUrl?: string | null;
  readonly signal?: AbortSignal;
  /** Stages of the ranking stack switched off (see stages.ts): for measuring each one's effect. */
  readonly ablate?: readonly StageName[];
  /**
   * How many hits of each retriever's list and of the ranked order the trace keeps (8 and 20 when
   * absent): the evaluation reads deep traces to tell where a missed answer was lost.
   */
  readonly traceDepth?: number;
}

/** A chunk in the trace, with where it is. */
export interface TracedChunk {
  readonly chunkId: string;
  readonly path: string | null;
  readonly startLine: number;
  readonly endLine: number;
  readonly level: string;
}

export type CorrectionStrategy = 'none' | 'web_search';

export interface SearchMetadata {
  readonly mode: SearchMode;
  readonly queryMode: QueryMode;
  readonly modeDecidedBy: ModeDecision['decidedBy'];
  readonly scope: string | null;
  readonly technicality: Technicality;
  readonly crag: CragEvaluation & {
    readonly strategy: CorrectionStrategy;
  };
  /** True when fast mode found nothing and the search was rerun in thinking mode. */
  readonly escalated: boolean;
  readonly timings: Record<string, number>;
  readonly flow: string | null;
  readonly diagram: string | null;
  readonly findings: readonly string[];
  readonly web: readonly WebResult[];
  /** What the user should know about how the question was taken (a long question cut down). */
  readonly notices: readonly string[];
}

export interface SearchTrace {
  readonly parsed: ParsedQuery;
  readonly modeDecision: ModeDecision;
  readonly retrievers: readonly {
    source: string;
    top: readonly (TracedChunk & { score: number; evidence: string })[];
  }[];
  readonly fused: readonly { chunkId: string; score: number; ranks: readonly (number | null)[] }[];
  /** The order the spans were shaped from (fused, graph neighbours woven in), best first. */
  readonly ranked: readonly TracedChunk[];
}

export interface SearchResult {
  /** Every file the search ranked, best first, each with its spans best first (the budget aside). */
  readonly files: readonly FileResult[];
  /** The spans the context holds, best first across files, as the budget took them. */
  readonly spans: readonly Span[];
  readonly context: BudgetedContext;
  readonly metadata: SearchMetadata;
  readonly trace: SearchTrace;
}

/** Chunks shaped into spans: enough for the budget and for 50 results. */
const SHAPED_CHUNKS = 45;
/** The first hits that keep their places before graph neighbours are woven in, one after every few hits. */
const NEIGHBOURS_AFTER = 5;
const NEIGHBOUR_EVERY = 3;
/** A related word the question did not use counts this much of one it did. */
const RELATED_WEIGHT = 0.35;
/** The model's nearest index words taken for each question word. */
const NEAREST_WORDS = 4;
/** A stem of a question word counts this much of the word. */
const STEM_WEIGHT = 0.7;
/**
 * The lexical list's first hits reordered by how closely they hold the question's words, for the
 * files list's order (see standingByCloseWords). The first 10, 40 and the whole list were measured
 * too; all helped the peer suite, 20 the most.
 */
const CLOSE_WORDS_HEAD = 20;
/** Lists that rank the whole index; the others hold only the chunks some evidence points at. */
const RETRIEVAL_SOURCES: ReadonlySet<RankedHits['source']> = new Set(['lexical', 'semantic']);

const log = getLogger('search.pipeline');

/** Files whose facts a searcher keeps for the next questions (see fileFacts). */
const KEPT_FILE_FACTS = 4096;

/** What a file's facts say for shaping and ranking. */
export interface FileFacts {
  /** Where each chunk's own definition starts: the line of its first fact. */
  readonly definitionLines: ReadonlyMap<string, number>;
  /** Its definitions, modules left out: their names in the facts' order, and how many declare types. */
  readonly definitions: FileDefinitions;
}

/** What the facts of one file (in the graph's order) say for shaping and ranking. */
export function fileFactsOf(
  facts: readonly Pick<SymbolFacts, 'chunkId' | 'startLine' | 'kind' | 'name'>[],
): FileFacts {
  const definitionLines = new Map<string, number>();
  const names: string[] = [];
  let typeDeclarations = 0;
  for (const fact of facts) {
    if (fact.chunkId !== null && !definitionLines.has(fact.chunkId))
      definitionLines.set(fact.chunkId, fact.startLine);
    if (fact.kind !== 'module') names.push(fact.name);
    if (fact.kind === 'interface' || fact.kind === 'type') typeDeclarations++;
  }
  return { definitionLines, definitions: { names, typeDeclarations } };
}

export class Searcher {
  private readonly index: SearchIndex;
  readonly texts: ChunkTexts;
  /** The context's token counts of the index's texts, counted ahead of questions. */
  private readonly tokenCounts: StoredTokenCounts;
  /** How far the semantic list is trusted on this codebase (1: the default weights, unscaled). */
  private semanticTrust = 1;
  private readonly structure = new StructureCache();
  private knownFolders: Set<string> | null = null;
  /** The catalog's folders `knownFolders` was made of. */
  private foldersRead: ReadonlySet<string> | null = null;
  private pathVocabulary: PathVocabulary | null = null;
  /** The words of the chunks the proximity stage measured, kept across questions. */
  private readonly chunkWords = wordPlacesCache();
  private readonly nearestWords: NearestWords | null;
  /** The facts of the files questions reached (see fileFacts), dropped when the index changes. */
  private readonly factsByFile = new Map<string, FileFacts>();

  /**
   * `savedWords`: where the nearest words' rows are kept between openings, when anywhere;
   * `vectors`: a scan of the index's vectors already reading them (made of the same tables and
   * catalog), when there is one.
   */
  constructor(
    index: Omit<SearchIndex, 'vectors'>,
    savedWords: SavedWordRows | null = null,
    vectors = new VectorScan(index.tables, index.catalog),
  ) {
    this.index = { ...index, vectors };
    this.texts = new ChunkTexts(index.texts);
    this.tokenCounts = new StoredTokenCounts(index.texts);
    this.nearestWords = index.embedder
      ? new NearestWords(index.lexical, index.embedder, savedWords)
      : null;
  }

  /**
   * The stems of the question's words the index knows ("skipped" finds `skip` in code), each
   * with how much it counts when it names a chunk. A stem matches text nearly as the word does,
   * but names a definition only for a word the code never uses: where the code has the word
   * itself, a definition named by the stem (`handle` for "handling") is another thing, and a
   * name match, the strongest lexical evidence, would put it ahead of the code using the word.
   */
  private stems(terms: readonly string[]): Map<string, number> {
    const { lexical } = this.index;
    const nameWeights = new Map<string, number>();
    for (const term of terms) {
      const nameWeight = lexical.hasTerm(term) ? 0 : STEM_WEIGHT;
      for (const stem of inflectionStems(term)) {
        if (terms.includes(stem) || !lexical.hasTerm(stem)) continue;
        nameWeights.set(stem, Math.max(nameWeights.get(stem) ?? 0, nameWeight));
      }
    }
    return nameWeights;
  }

  /**
   * Readies what questions will need from the index as it now is (the nearest words' vectors),
   * after an index run. Not while a take-in of words runs (the warm-up's, after opening): a save
   * would wait for all of it, and the next question takes in the words the save added.
   */
  async prepare(): Promise<void> {
    if (this.nearestWords?.busy) return;
    await this.nearestWords?.catchUp();
  }

  /**
   * Loads after opening what the first question would otherwise load: the nearest words'
   * vectors (every index word embedded: about a second at 10k files) and the chunks' vectors.
   */
  async warm(): Promise<void> {
    await this.nearestWords?.catchUp();
    await this.index.vectors.ready();
  }

  /**
   * Counts the context's tokens of the texts not counted yet, slice by slice, each after `pause`
   * (see StoredTokenCounts); resolves once they are counted. Answers are the same before and after.
   */
  countContextTokens(pause: () => Promise<void>): Promise<void> {
    return this.tokenCounts.catchUp(pause);
  }

  /** Saves the token counts made since they were last saved, for the next opening (see StoredTokenCounts). */
  saveTokenCounts(): Promise<void> {
    return this.tokenCounts.saveUnsaved();
  }

  /** Saves the vectors in memory for the next opening, unless they are saved already (see VectorScan.save). */
  saveVectors(): Promise<void> {
    return this.index.vectors.save();
  }

  /** Applies a measured calibration of the retrievers (see calibration.ts); null restores the default weights. */
  calibrate(calibration: RetrieverCalibration | null): void {
    this.semanticTrust = calibration?.semanticTrust ?? 1;
  }

  /** Where a function chunk's own definition starts, from its fact. */
  private definitionLine(chunkId: string): number | undefined {
    const meta = this.index.catalog.get(chunkId);
    if (meta?.level !== 'function' || !meta.filePath) return undefined;
    return this.fileFacts(meta.filePath).definitionLines.get(chunkId);
  }

  /** What the facts of a file say for shaping and ranking, read once until the index changes. */
  private fileFacts(path: string): FileFacts {
    let known = this.factsByFile.get(path);
    if (!known) {
      if (this.factsByFile.size >= KEPT_FILE_FACTS) this.factsByFile.clear();
      this.factsByFile.set(path, (known = fileFactsOf(this.index.graph.factsInFile(path))));
    }
    return known;
  }

  /**
   * Forgets what was read from the tables; called whenever the index changes. When the `changed`
   * files are known, only the vectors in memory for them are patched.
   */
  invalidate(changed?: readonly string[]): void {
    if (changed) {
      this.index.vectors.refresh(changed);
      this.pathVocabulary?.refresh(
        changed,
        (path) => this.index.graph.factsInFile(path).length > 0,
      );
    } else {
      this.index.vectors.clear();
      this.pathVocabulary = null;
    }
    this.structure.clear();
    this.factsByFile.clear();
  }

  search(request: SearchRequest): Promise<SearchResult> {
    return withTrace(() => this.run(request, request.mode ?? 'fast', false));
  }

  private async run(
    request: SearchRequest,
    mode: SearchMode,
    escalated: boolean,
  ): Promise<SearchResult> {
    const timings: Record<string, number> = {};
    const mark = (name: string, started: number) => (timings[name] = elapsedMs(started));
    let started = performance.now();
    log.info('search_started', { query_length: request.query.length, mode, escalated });
    // the posting lists this search reads are read once, into room the last search read into
    this.index.lexical.startReading();

    const stages = new StageSwitches(request.ablate);
    const preprocessed = preprocessQuery(request.query, request.attachment);
    const parsed = stages.on('index-name')
      ? withIndexName(preprocessed, this.index.graph)
      : preprocessed;
    const notices = noticesFor(request.query, parsed);
    const technicality = scoreTechnicality(
      parsed,
      { has: (term) => this.index.lexical.hasTerm(term) },
      stages.on('calibration') ? this.semanticTrust : 1,
    );
    mark('preprocess', started);
    started = performance.now();
    const llm = mode === 'thinking' ? (request.llm ?? null) : null;
    const modeDecision = await classifyMode(parsed, this.folders(), llm, request.signal);
    mark('route', started);

    started = performance.now();
    const limit = Math.max(computeTopK(this.index.catalog.size) * 2, 20);
    const terms = [
      ...new Set([
        ...queryTerms(parsed.naturalLanguage),
        ...(parsed.pastedCode ? queryTerms(parsed.pastedCode) : []),
      ]),
    ];
    const semanticText = [parsed.naturalLanguage, parsed.pastedCode ?? ''].join('\n').trim();
    // The codebase's own words for what the question names: the model's nearest index words.
    const related =
      stages.on('nearest-words') && this.nearestWords
        ? await this.nearestWords.nearest(terms, NEAREST_WORDS)
        : [];
    const stemNames = stages.on('stems') ? this.stems(terms) : new Map<string, number>();
    const stems = [...stemNames.keys()];
    const queryWeights = new Map([
      ...related.map((word) => [word, RELATED_WEIGHT] as const),
      ...stems.map((stem) => [stem, STEM_WEIGHT] as const),
    ]);
    const lists: RankedHits[] = [
      lexicalHits(this.index, [...terms, ...related, ...stems], CHUNK_LEVELS, limit, {
        queryWeights,
        nameWeights: stemNames,
      }),
      await semanticHits(this.index, semanticText, CHUNK_LEVELS, limit),
      symbolHits(this.index, parsed),
      await assignmentHits(this.index, parsed, this.texts),
      await messageHits(this.index, parsed, this.texts),
      raiseHits(this.index, parsed),
      pathHits(this.index, parsed),
    ];
    mark('retrieve', started);
    started = performance.now();
    let fused = this.fuse(lists, technicality, modeDecision.mode, stages);
    if (!fused.length && mode === 'fast') {
      log.warn('silent_escalation', {
        reason: 'zero_results_fast_mode',
      });
      return this.run(request, 'thinking', true);
    }
    const strategy: StrategyResult = this.strategy(stages, {
      index: this.index,
      query: parsed,
      mode: modeDecision.mode,
      scope: modeDecision.scope,
      seeds: fused.slice(0, limit).map((hit) => hit.id),
      errorSites: lists
        .filter((list) => list.source === 'message' || list.source === 'raises')
        .flatMap((list) => list.hits),
      terms,
      structure: this.structure,
    });
    if (strategy.hits.hits.length) {
      lists.push(strategy.hits);
      fused = this.fuse(lists, technicality, modeDecision.mode, stages);
    }
    mark('strategy', started);

    started = performance.now();
    const correction = await this.correct(
      request,
      parsed,
      lists,
      fused.slice(0, computeTopK(this.index.catalog.size)).map((hit) => hit.id),
    );
    mark('correct', started);

    started = performance.now();
    // The best hits keep their places; their neighbours in the calls graph fill in after them. Not
    // for analytical questions: their answer is the list of facts that match, which neighbours dilute.
    const best = fused.map((hit) => hit.id);
    const neighbours: RankedHits =
      modeDecision.mode === 'analytical' || !stages.on('neighbours')
        ? { source: 'neighbours', hits: [] }
        : await this.neighbours(best);
    const order = weaveIn(
      best,
      neighbours.hits.map((hit) => hit.chunkId),
      NEIGHBOURS_AFTER,
      NEIGHBOUR_EVERY,
    );
    const ranked = this.rank(order.slice(0, SHAPED_CHUNKS), [...lists, neighbours]);
    const bodies = await this.texts.get(ranked.map((chunk) => chunk.chunkId));
    const weights = this.termWeights(terms);
    const reach = this.textReach(weights);
    const shaped = shapeSpans(
      ranked,
      this.index.catalog,
      bodies,
      weights,
      (chunkId) => this.definitionLine(chunkId),
      reach,
      stages.on('class-bodies'),
    );
    const contenders = stages.on('contender-files')
      ? this.contenders(
          lists.filter((list) => list.source === 'semantic' || list.source === 'lexical'),
          shaped,
          weights,
          reach,
          stages.on('class-bodies'),
        )
      : [];
    const files = rankFiles(
      shaped,
      request.query,
      (path) => this.fileFacts(path).definitions,
      stages.on('file-roles'),
      this.fileEvidence(
        stages,
        [...new Set([...shaped, ...contenders].map((cited) => cited.path))],
        [...terms, ...related, ...stems],
        queryWeights,
        lists.find((list) => list.source === 'symbol')?.hits ?? [],
      ),
      contenders,
      stages.on('file-coverage') ? (paths) => this.fileCoverage(paths, terms) : null,
      stages.on('file-proximity')
        ? this.standingByCloseWords(lists, neighbours, terms, {
            technicality,
            mode: modeDecision.mode,
            stages,
          })
        : null,
    );
    mark('shape', started);
    started = performance.now();
    // The budget takes spans in their own rank order across files: taken file by file, one file's
    // many spans would push the next file's best lines out.
    const context = await buildContext(
      shaped,
      this.index.catalog,
      this.texts,
      request.budgetTokens ?? MODE_BUDGETS[modeDecision.mode],
      this.tokenCounts,
    );
    mark('context', started);
    timings.total = Object.values(timings).reduce((a, b) => a + b, 0);

    const metadata: SearchMetadata = {
      mode,
      queryMode: modeDecision.mode,
      modeDecidedBy: modeDecision.decidedBy,
      scope: modeDecision.scope,
      technicality,
      crag: correction.evaluation,
      escalated,
      timings,
      flow: strategy.flow,
      diagram: strategy.diagram,
      findings: strategy.findings,
      web: correction.web,
      notices,
    };
    log.info('search_completed', {
      mode,
      query_mode: modeDecision.mode,
      spans: context.spans.length,
      crag: correction.evaluation.decision,
      total_duration_ms: timings.total,
    });
    if (!context.spans.length)
      log.warn('qa_no_results', { mode, query_summary: request.query.slice(0, 100) });
    return {
      files,
      spans: context.spans,
      context,
      metadata,
      trace: {
        parsed,
        modeDecision,
        retrievers: [...lists, neighbours].map((list) => ({
          source: list.source,
          top: list.hits
            .slice(0, request.traceDepth ?? 8)
            .map(({ chunkId, score, evidence }) => ({ ...this.traced(chunkId), score, evidence })),
        })),
        fused: fused
          .slice(0, 20)
          .map((hit) => ({ chunkId: hit.id, score: hit.score, ranks: hit.ranks })),
        ranked: order.slice(0, request.traceDepth ?? 20).map((chunkId) => this.traced(chunkId)),
      },
    };
  }

  /** A chunk as the trace shows it: its id and where it is. */
  private traced(chunkId: string): TracedChunk {
    const meta = this.index.catalog.get(chunkId);
    return {
      chunkId,
      path: meta ? (meta.filePath ?? meta.directoryPath) : null,
      startLine: meta?.startLine ?? 0,
      endLine: meta?.endLine ?? 0,
      level: meta?.level ?? 'unknown',
    };
  }

  /** Graph neighbours of the best hits, with the code of the hits read for the members they name. */
  private async neighbours(ranking: readonly string[]): Promise<RankedHits> {
    const seeds = neighbourSeeds(this.index.catalog, ranking);
    const files = seeds
      .map((id) => this.index.catalog.get(id)!.parentFileId)
      .filter((id): id is string => !!id);
    return neighbourHits(
      this.index,
      ranking,
      await this.texts.get([...new Set([...seeds, ...files])]),
    );
  }

  /** The question mode's facts-graph strategy, unless switched off. */
  private strategy(
    stages: StageSwitches,
    input: Parameters<typeof runStrategy>[0],
  ): StrategyResult {
    if (stages.on('graph-strategy')) return runStrategy(input);
    return { hits: { source: 'graph', hits: [] }, flow: null, diagram: null, findings: [] };
  }

  /**
   * The files the semantic and lexical lists reached that no ranked chunk brought in, each by the
   * spans of its best chunk there: contenders for the files list's places, lifted only by
   * whole-file evidence, and never taking lines from the context's budget. Only the few that take
   * a place in the list are shaped (see citableChunks).
   */
  private contenders(
    retrieved: readonly RankedHits[],
    shaped: readonly Span[],
    weights: ReadonlyMap<string, number>,
    reach: TextReach,
    classBodies: boolean,
  ): CitableChunk[] {
    const ids = closestUnlisted(
      retrieved.flatMap((list) => list.hits),
      (id) => this.index.catalog.filePathOf(id),
      new Set(shaped.map((span) => span.path)),
    );
    // most contenders are decided by their level, and few are shaped: texts are read when needed
    return citableChunks(
      this.rank(ids, retrieved),
      this.index.catalog,
      this.texts.lookup(),
      weights,
      (chunkId) => this.definitionLine(chunkId),
      reach,
      classBodies,
    );
  }

  /** Whole-file evidence about the candidate files, from the stages switched on. */
  private fileEvidence(
    stages: StageSwitches,
    paths: readonly string[],
    terms: readonly string[],
    weights: ReadonlyMap<string, number>,
    named: readonly Hit[],
  ): ReadonlyMap<string, number>[] {
    const { lexical } = this.index;
    const evidence: ReadonlyMap<string, number>[] = [];
    const fileOf = (id: string) => this.index.catalog.filePathOf(id);
    if (stages.on('file-definitions')) evidence.push(definingScores(named, fileOf, paths));
    if (stages.on('file-words')) evidence.push(wholeFileScores(lexical, paths, terms, weights));
    if (stages.on('file-paths')) {
      this.pathVocabulary ??= new PathVocabulary(this.index.graph.files());
      evidence.push(pathScores(this.pathVocabulary, paths, terms, weights));
    }
    return evidence;
  }

  /** Each listed file's share of the question's words, each word in any of its forms. */
  private fileCoverage(paths: readonly string[], terms: readonly string[]): Map<string, number> {
    return coverageScores(this.index.lexical, paths, wordForms(terms));
  }

  /**
   * Each chunk's standing for the files list (1 / its rank) in a ranking where the lexical list's
   * first CLOSE_WORDS_HEAD hits that hold more of the question's words within one window come
   * first, fused and woven with the neighbours as the ranking itself is. Only the files list's
   * order reads it: the spans and the context keep the ranking without it, where putting close
   * words first lowered the line questions' recall with a model. Null when that changes nothing
   * (the question has fewer than two words the index holds, or the head is in that order already).
   */
  private standingByCloseWords(
    lists: readonly RankedHits[],
    neighbours: RankedHits,
    terms: readonly string[],
    fusion: { technicality: Technicality; mode: QueryMode; stages: StageSwitches },
  ): Map<string, number> | null {
    // a word's stems are its forms here only while the stems stage is on: they are what it switches
    const forms = fusion.stages.on('stems')
      ? wordForms(terms)
      : new Map(terms.map((term) => [term, [term]]));
    const query = new ProximityQuery(weighQuestionWords(this.index.lexical, forms));
    if (!query.measurable) return null;
    const texts = this.texts.lookup();
    const lexical = lists.find((list) => list.source === 'lexical');
    if (!lexical) return null;
    const closeFirst = closeWordsFirst(lexical.hits, CLOSE_WORDS_HEAD, query, (id) => {
      const text = texts.get(id);
      return text === undefined ? undefined : this.chunkWords.get(text, wordPlaces);
    });
    // the same order ranks the chunks as the spans already do: nothing to fuse again
    if (closeFirst.every((hit, at) => hit === lexical.hits[at])) return null;
    const reordered = lists.map((list) =>
      list === lexical ? { ...list, hits: closeFirst } : list,
    );
    const order = weaveIn(
      this.fuse(reordered, fusion.technicality, fusion.mode, fusion.stages).map((hit) => hit.id),
      neighbours.hits.map((hit) => hit.chunkId),
      NEIGHBOURS_AFTER,
      NEIGHBOUR_EVERY,
    );
    return new Map(order.map((chunkId, rank) => [chunkId, 1 / (rank + 1)]));
  }

  /** Weighted RRF across the retrievers; the weights follow technicality and the question's mode. */
  private fuse(
    lists: readonly RankedHits[],
    technicality: Technicality,
    mode: QueryMode,
    stages: StageSwitches,
  ) {
    const weight: Record<RankedHits['source'], number> = {
      lexical: technicality.lexicalWeight,
      semantic: this.index.embedder ? technicality.semanticWeight : 0,
      symbol: 1,
      // Code holding the quoted message is the surest evidence there is.
      message: 3,
      raises: mode === 'diagnostic' ? 0.8 : 0.5,
      path: 0.8,
      // Facts answer "which functions call / change X" better than any text match.
      graph:
        mode === 'analytical'
          ? 2.5
          : mode === 'conceptual'
            ? 0.5
            : mode === 'diagnostic'
              ? 0.9
              : 1.2,
      // woven in after fusion (see run): fused, a neighbour of the first hit would displace the second
      neighbours: 0,
    };
    const ranked: RankedList[] = lists.map((list) => ({
      ids: list.hits.map((hit) => hit.chunkId),
      weight: weight[list.source],
      kind: RETRIEVAL_SOURCES.has(list.source) ? 'retrieval' : 'evidence',
    }));
    const rrf = weightedRrf(ranked.filter((list) => list.ids.length && list.weight > 0));
    const fused = stages.on('group-boost')
      ? boostByGroup(rrf, (id) => this.index.catalog.filePathOf(id) ?? null)
      : rrf;
    log.info('hybrid_retrieve_completed', {
      lists: lists.map((list) => `${list.source}:${list.hits.length}`),
      total_results_before_merge: lists.reduce((sum, list) => sum + list.hits.length, 0),
      total_results_after_merge: fused.length,
      consensus_hits: fused.filter((hit) => hit.ranks.filter((rank) => rank !== null).length > 1)
        .length,
    });
    if (log.enabled('debug'))
      log.debug('rrf_top_results', {
        results: fused
          .slice(0, 5)
          .map((hit) => ({ chunk_id: hit.id, rrf_score: hit.score, ranks: hit.ranks })),
      });
    return fused;
  }

  private rank(order: readonly string[], lists: readonly RankedHits[]): RankedChunk[] {
    return rankWithEvidence(order, lists, this.index.catalog);
  }

  /**
   * CRAG's evaluation of the top chunks: how far they answer the question (shown with the answer
   * as its confidence). When they do not answer it at all, the web is asked, if the user
   * configured a search server. Re-searching with co-occurring words was measured and removed:
   * it lowered the peer suite.
   */
  private async correct(
    request: SearchRequest,
    parsed: ParsedQuery,
    lists: readonly RankedHits[],
    top: readonly string[],
  ) {
    const bodies = await this.texts.get(top);
    const semantic = new Map(
      lists.find((list) => list.source === 'semantic')!.hits.map((hit) => [hit.chunkId, hit.score]),
    );
    const lexical = lists.find((list) => list.source === 'lexical')!.hits;
    const bestLexical = Math.max(1e-9, ...lexical.map((hit) => hit.score));
    const lexicalScore = new Map(lexical.map((hit) => [hit.chunkId, hit.score / bestLexical]));
    const artifacts = top.map((id) => ({
      content: bodies.get(id) ?? '',
      path: this.index.catalog.get(id)?.filePath ?? this.index.catalog.get(id)?.directoryPath ?? id,
      relevance: semantic.get(id) ?? lexicalScore.get(id) ?? 0,
    }));
    const evaluation = evaluateRetrieval(parsed.naturalLanguage, artifacts);
    let web: WebResult[] = [];
    let strategy: CorrectionStrategy = 'none';
    if (evaluation.decision === 'IRRELEVANT' && request.webSearchUrl) {
      const found = await searchWeb(request.webSearchUrl, parsed.naturalLanguage, request.signal);
      if (found.ok) {
        web = found.value;
        strategy = 'web_search';
      }
    }
    log.info('crag_corrected', {
      decision: evaluation.decision,
      strategy,
      web_results: web.length,
    });
    return { evaluation: { ...evaluation, strategy }, web };
  }

  /** How much each query term says at the function level (its idf), for choosing lines. */
  private termWeights(terms: readonly string[]): Map<string, number> {
    const { documents } = this.index.lexical.levelStats('function');
    const weights = new Map<string, number>();
    for (const term of terms) {
      const frequency = this.index.lexical.documentFrequencyOf('function', term);
      if (!frequency) continue;
      weights.set(term, Math.log(1 + (documents + 1) / (frequency + 1)));
    }
    return weights;
  }

  /**
   * How much of the question's `weights` each chunk's indexed text holds (see TextReach), its
   * file's chunks looked up once per question. A chunk's stored text is the text it was indexed
   * from, unless a summary replaced it: then nothing is known.
   */
  private textReach(weights: ReadonlyMap<string, number>): TextReach {
    const { lexical } = this.index;
    // asked for every shaped chunk and contender: the weights as two lists, not an entry per term
    const terms = [...weights.keys()];
    const termWeights = [...weights.values()];
    return (meta) => {
      if (meta.isSummarized || !meta.filePath || meta.level === 'directory') return Infinity;
      const docId = lexical.docIdAt(meta.filePath, meta.id);
      if (docId === undefined) return Infinity;
      let reach = 0;
      for (let i = 0; i < terms.length; i++)
        if (lexical.termFrequencyIn(docId, terms[i]!) > 0) reach += termWeights[i]!;
      return reach;
    };
  }

  /**
   * The index's folders (for scopes like "in the auth module"), made again when the catalog gives
   * a new set of them. A change rarely reorders them: the set made before is kept when the new one
   * holds the same folders in the same order, and with it the table of their endings that scopes
   * are matched against (~30 ms to build again at 100k files).
   */
  private folders(): Set<string> {
    const paths = this.index.catalog.directoryPaths();
    if (this.knownFolders && paths === this.foldersRead) return this.knownFolders;
    this.foldersRead = paths;
    const read = new Set([...paths].filter((folder) => folder && folder !== '.'));
    if (!this.knownFolders || !sameInOrder(this.knownFolders, read)) this.knownFolders = read;
    return this.knownFolders;
  }
}

/** Whether two sets hold the same values in the same order. */
function sameInOrder(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  const others = b.values();
  for (const value of a) if (value !== others.next().value) return false;
  return true;
}

/** What the user should know about how the question was taken. */
function noticesFor(query: string, parsed: ParsedQuery): string[] {
  if (!parsed.truncated) return [];
  log.warn('query_truncated', { query_length: query.length, kept: MAX_QUERY_CHARACTERS });
  const head = (MAX_QUERY_CHARACTERS - QUERY_TAIL_CHARACTERS).toLocaleString('en');
  return [
    `The question is ${query.length.toLocaleString('en')} characters long; its first ${head} and last ${QUERY_TAIL_CHARACTERS.toLocaleString('en')} characters were searched.`,
  ];
}

/** Each question word with its forms: the word and its stems. */
function wordForms(terms: readonly string[]): Map<string, string[]> {
  return new Map(terms.map((term) => [term, [term, ...inflectionStems(term)]]));
}

/**
 * The chunks of `order`, ranked in that order, with the evidence of every retriever gathered per
 * chunk (of those in the order only: a caller cutting the order first pays for the chunks it
 * keeps). Folder and file summaries are not moved ahead of code: they reach the reader as the
 * parents of each span.
 */
export function rankWithEvidence(
  order: readonly string[],
  lists: readonly RankedHits[],
  catalog: ReadonlyMap<string, ChunkMeta>,
): RankedChunk[] {
  const wanted = new Set(order);
  const evidence = new Map<string, { why: string[]; lines: number[]; message?: QuotedMessage }>();
  for (const list of lists) {
    for (const hit of list.hits) {
      if (!wanted.has(hit.chunkId)) continue;
      const entry = evidence.get(hit.chunkId) ?? { why: [], lines: [] };
      entry.message ??= hit.message;
      // Word matches and similarity are said once, however many lists found them.
      if (
        entry.why.length < 3 &&
        !entry.why.some((why) => reasonKind(why) === reasonKind(hit.evidence))
      )
        entry.why.push(hit.evidence);
      entry.lines.push(...(hit.lines ?? []));
      evidence.set(hit.chunkId, entry);
    }
  }
  return order.map((chunkId, rank) => {
    const entry = evidence.get(chunkId);
    const meta = catalog.get(chunkId);
    const name = meta
      ? [meta.className, meta.functionName].filter(Boolean).join('.') ||
        meta.filePath ||
        meta.directoryPath
      : chunkId;
    return {
      chunkId,
      score: 1 / (rank + 1),
      why: `${meta?.level ?? 'chunk'} ${name}: ${entry?.why.join('; ') ?? 'related'}`,
      lines: [...new Set(entry?.lines ?? [])],
      ...(entry?.message ? { message: entry.message } : {}),
    };
  });
}

function reasonKind(evidence: string): string {
  return /^(matches|similar in meaning)\b/.exec(evidence)?.[1] ?? evidence;
}

/**
 * A one-word question that exactly names a definition in the index (`Flask`, `Session`, `URL`)
 * asks for that definition, whatever its shape: it goes to the definition lookup. (Capitalised
 * words inside a sentence were looked up too; that lowered the line set and was dropped.)
 */
export function withIndexName(
  parsed: ParsedQuery,
  graph: Pick<SearchIndex['graph'], 'definitionsNamed'>,
): ParsedQuery {
  const words = [...parsed.naturalLanguage.matchAll(/[\p{L}_$][\p{L}\p{N}_$]*/gu)].map(
    (match) => match[0],
  );
  const [word] = words;
  if (
    words.length !== 1 ||
    parsed.extractedIdentifiers.includes(word!) ||
    !graph.definitionsNamed(word!).some((fact) => fact.name === word && fact.kind !== 'module')
  )
    return parsed;
  log.info('index_name_found', { name: word });
  return { ...parsed, extractedIdentifiers: [...parsed.extractedIdentifiers, word!] };
}
