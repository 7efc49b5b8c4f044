/**
 * Every switchable part of the ranking stack, in the order a search runs them, in one place.
 * `code-oracle eval --ablate NAME[,NAME]` switches parts off; `npm run eval:ablate` measures each
 * one's effect on the line questions and the peer suite, with and without an embedding model.
 * A part stays only while that table shows it helps on both suites and hurts neither. A
 * `file-order` part only orders the files list, which the line scorer does not read: it stays
 * while it helps the peer suite with and without a model and the line set does not move; one that
 * `needsModel` cannot move the columns without a model, and must help where it can and hurt nowhere.
 */
export const STAGES = [
  {
    name: 'calibration',
    kind: 'routing',
    what: "the semantic list's weight follows how far the model was measured to find this code",
  },
  {
    name: 'index-name',
    kind: 'retrieval',
    what: 'a one-word question that exactly names a definition in the index goes to the definition lookup',
  },
  {
    name: 'nearest-words',
    kind: 'retrieval',
    what: "the embedding model's nearest index words of the question words join the lexical query at low weight",
  },
  {
    name: 'stems',
    kind: 'retrieval',
    what: 'stems of the question words the index knows join the lexical query (naming a definition only for a word the code never uses) and count as the words in the proximity window',
  },
  {
    name: 'graph-strategy',
    kind: 'retrieval',
    what: "the question mode's facts-graph strategy (callers, mutators, raisers, flows) adds its list",
  },
  {
    name: 'group-boost',
    kind: 'rescoring',
    what: "a chunk gains a share of its file's decayed fused scores",
  },
  {
    name: 'neighbours',
    kind: 'rescoring',
    what: 'calls-graph neighbours of the best hits are woven in after them',
  },
  {
    name: 'class-bodies',
    kind: 'shaping',
    what: 'a class cited by its header shows the start of its body (its first members) up to the header allowance, not its declaration alone',
  },
  {
    name: 'file-words',
    kind: 'file-order',
    what: "files that hold more of the question's words, over all their chunks (BM25 over whole files), rise in the files list",
  },
  {
    name: 'file-paths',
    kind: 'file-order',
    what: "files whose folder or file names hold the question's words, weighted by rarity among the index's paths, rise in the files list",
  },
  {
    name: 'file-coverage',
    kind: 'file-order',
    what: "within the files list, files holding more of the question's distinct words (in any form, in their text or path) rise above files repeating fewer of them",
  },
  {
    name: 'file-proximity',
    kind: 'file-order',
    what: "the files list is ordered from a ranking whose first lexical hits holding more of the question's words within one window come first",
  },
  {
    name: 'file-definitions',
    kind: 'file-order',
    what: 'files that define what the question names rise above the files that only use it',
  },
  {
    name: 'contender-files',
    kind: 'file-order',
    what: 'files the lexical or semantic list reached, though no ranked chunk brought them in, compete for the files list on whole-file evidence',
  },
  {
    name: 'file-roles',
    kind: 'file-order',
    what: 'tests, examples, docs, stubs, generated, vendored and compat files rank below source',
  },
] as const;

export type StageName = (typeof STAGES)[number]['name'];

const NAMES: ReadonlySet<string> = new Set(STAGES.map((stage) => stage.name));

export function isStageName(name: string): name is StageName {
  return NAMES.has(name);
}

/** Which stages run: all of them but the ones switched off. */
export class StageSwitches {
  private readonly off: ReadonlySet<StageName>;

  constructor(off: readonly StageName[] = []) {
    this.off = new Set(off);
  }

  on(name: StageName): boolean {
    return !this.off.has(name);
  }

  get disabled(): StageName[] {
    return [...this.off];
  }
}
