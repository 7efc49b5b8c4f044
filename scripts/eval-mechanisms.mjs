// Where a missed answer was lost, by mechanism: the classification scripts/eval-misses.mjs tabulates
// (it runs the suites). It reads results written by `code-oracle eval --trace`:
// each row's `trace` holds every retriever's list and the ranked order the spans were shaped from,
// each chunk as [path, startLine, endLine, level], and the path roles of the listed files.

/** The mechanisms a missed gold line of a line question can be lost to, in the order tested. */
export const LINE_MECHANISMS = {
  fileNeverRetrieved: 'gold file in no retriever list',
  fileOutsideBudget: 'gold file retrieved, none of its spans within the line budget',
  lineLeftOut: 'answering function cited within the budget, no span of it holds the gold line',
  functionPastBudget: 'answering function cited, its span holding the gold line past the budget',
  functionDropped: 'answering function shaped into a span, the span left out by the token budget',
  functionNotShaped: 'answering function retrieved, ranked past the chunks shaped into spans',
  onlyClassRetrieved: 'only the class holding the gold line retrieved, never its function',
  lineNeverReached: 'gold file within the budget, no chunk holding the gold line retrieved',
};

/** The mechanisms a peer target can lose nDCG@10 to, in the order tested. */
export const PEER_MECHANISMS = {
  beatenByRole: 'ranked 2-10, a test/example/docs/stub/generated/vendored/compat file above it',
  beatenBySibling: 'ranked 2-10, a source file of its own folder above it',
  beatenByOther: 'ranked 2-10, only source files of other folders above it',
  spanMissed: 'its file in the first 10, but the first span misses the target lines',
  fileBelowTen: 'its file in the files list, below 10th',
  retrievedNotListed: 'its file retrieved by a list, not in the files list',
  neverRetrieved: 'its file in no retriever list',
};

const chunkOf = ([path, startLine, endLine, level]) => ({ path, startLine, endLine, level });

/** Every chunk the trace names: the retrievers' lists and the ranked order. */
function tracedChunks(trace) {
  return [...trace.lists.flatMap((list) => list.chunks), ...trace.ranked].map(chunkOf);
}

/** The spans the scorer reads within `budget` lines, the last cut to fit (as the shared scorer does). */
export function withinBudget(spans, budget) {
  const taken = [];
  let left = budget;
  for (const span of spans) {
    if (left <= 0) break;
    const length = span.endLine - span.startLine + 1;
    taken.push({ ...span, endLine: length > left ? span.startLine + left - 1 : span.endLine });
    left -= Math.min(length, left);
  }
  return taken;
}

const holdsLine = (span, path, line) =>
  span.path === path && span.startLine <= line && line <= span.endLine;
const overlaps = (span, chunk) =>
  span.path === chunk.path && span.startLine <= chunk.endLine && chunk.startLine <= span.endLine;

/**
 * Each gold line of `question` the result misses within `budget` lines (its path and line), with
 * the mechanism that lost it and its share of the question's recall.
 */
export function lineMisses(question, result, budget) {
  const taken = withinBudget(result.results, budget);
  const chunks = tracedChunks(result.trace);
  const misses = [];
  for (const { path, line } of question.gold) {
    if (taken.some((span) => holdsLine(span, path, line))) continue;
    misses.push({
      path,
      line,
      share: 1 / question.gold.length,
      mechanism: lineMechanism(path, line),
    });
  }
  return misses;

  function lineMechanism(path, line) {
    if (!chunks.some((chunk) => chunk.path === path)) return 'fileNeverRetrieved';
    if (!taken.some((span) => span.path === path)) return 'fileOutsideBudget';
    const holding = chunks.filter(
      (chunk) => chunk.level !== 'file' && holdsLine(chunk, path, line),
    );
    const [answering] = holding
      .filter((chunk) => chunk.level === 'function')
      .sort((a, b) => a.endLine - a.startLine - (b.endLine - b.startLine));
    if (answering) {
      if (result.results.some((span) => holdsLine(span, path, line))) return 'functionPastBudget';
      if (taken.some((span) => overlaps(span, answering))) return 'lineLeftOut';
      if (result.results.some((span) => overlaps(span, answering))) return 'functionPastBudget';
      // a shaped chunk's spans are in its file's entry of the files list (the gold file has cited
      // spans, so its entry is there); one shaped but not cited was left out by the token budget
      const shaped = result.files.some(
        (file) =>
          file.path === path &&
          file.ranges.some(([startLine, endLine]) =>
            overlaps({ path, startLine, endLine }, answering),
          ),
      );
      return shaped ? 'functionDropped' : 'functionNotShaped';
    }
    return holding.length ? 'onlyClassRetrieved' : 'lineNeverReached';
  }
}

/**
 * Each peer target that loses nDCG@10 (against the ideal order), with the mechanism and the
 * share of the query's nDCG it loses. `targets` are [{path, start, end}] relative to the folder
 * indexed; a result's file stands for its first span, as the peer scorer reads it.
 */
export function peerMisses(targets, result, k = 10) {
  const listed = result.files.map((file) => ({
    path: file.path,
    startLine: file.ranges[0][0],
    endLine: file.ranges[0][1],
  }));
  const top = listed.slice(0, k);
  const hits = (file, target) =>
    file.path === target.path &&
    (target.start == null ||
      (file.startLine <= (target.end ?? target.start) && target.start <= file.endLine));
  const ranks = targets.map((target) => top.findIndex((file) => hits(file, target)));
  const gain = (rank) => 1 / Math.log2(rank + 2);
  let ideal = 0;
  for (let slot = 0; slot < Math.min(k, targets.length); slot++) ideal += gain(slot);
  const slots = targets
    .map((_, i) => i)
    .sort((a, b) => (ranks[a] < 0 ? k : ranks[a]) - (ranks[b] < 0 ? k : ranks[b]));
  const retrieved = new Set(tracedChunks(result.trace).map((chunk) => chunk.path));
  const misses = [];
  slots.slice(0, k).forEach((i, slot) => {
    const rank = ranks[i];
    const loss = (gain(slot) - (rank >= 0 ? gain(rank) : 0)) / ideal;
    if (loss <= 1e-9) return;
    misses.push({ loss, mechanism: peerMechanism(targets[i], rank) });
  });
  return misses;

  function peerMechanism(target, rank) {
    if (rank >= 0) {
      const above = top
        .slice(0, rank)
        .filter((file) => !targets.some((other) => hits(file, other)));
      if (above.some((file) => result.trace.roles[file.path])) return 'beatenByRole';
      const folder = (path) => path.split('/').slice(0, -1).join('/');
      return above.some((file) => folder(file.path) === folder(target.path))
        ? 'beatenBySibling'
        : 'beatenByOther';
    }
    if (top.some((file) => file.path === target.path)) return 'spanMissed';
    if (listed.some((file) => file.path === target.path)) return 'fileBelowTen';
    return retrieved.has(target.path) ? 'retrievedNotListed' : 'neverRetrieved';
  }
}
