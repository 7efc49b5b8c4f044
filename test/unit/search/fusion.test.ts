import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  boostByGroup,
  RRF_K,
  weightedRrf,
  type RankedList,
} from '../../../src/engine/search/fusion';

/** Weighted RRF as its definition reads: a map of first places per list, every id scored over all lists in order. */
function referenceRrf(lists: readonly RankedList[]) {
  const positions = lists.map((list) => {
    const map = new Map<string, number>();
    list.ids.forEach((id, index) => map.has(id) || map.set(id, index + 1));
    return map;
  });
  return [...new Set(lists.flatMap((list) => list.ids))]
    .map((id) => {
      const ranks = positions.map((map) => map.get(id) ?? null);
      const score = lists.reduce((sum, list, i) => {
        const rank = ranks[i] ?? (list.kind === 'evidence' ? null : positions[i]!.size + 1);
        return rank === null ? sum : sum + list.weight / (RRF_K + rank);
      }, 0);
      return { id, score, ranks };
    })
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

/** Few ids, so that lists share and repeat them; weights that tie as often as they differ. */
const listsArbitrary = fc.array(
  fc.record({
    ids: fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'F', 'é', 'a::b'), { maxLength: 12 }),
    weight: fc.constantFrom(0.4, 0.6, 1, 2.5),
    kind: fc.constantFrom<RankedList['kind']>('retrieval', 'evidence', undefined),
  }),
  { maxLength: 6 },
);

describe('fusion', () => {
  it('scores every chunk of the lists as weighted RRF defines it, to the last bit, in the same order', () => {
    fc.assert(
      fc.property(listsArbitrary, (lists) => {
        assert.deepEqual(weightedRrf(lists), referenceRrf(lists));
      }),
      { numRuns: 500 },
    );
  });

  it("gives each chunk a share of its file's decayed scores, looking each chunk's file up once", () => {
    fc.assert(
      fc.property(listsArbitrary, (lists) => {
        const fused = weightedRrf(lists);
        const groupOf = (id: string) => (id === 'e' ? null : id.toLowerCase().slice(0, 1));
        const asked: string[] = [];
        const boosted = boostByGroup(fused, (id) => {
          asked.push(id);
          return groupOf(id);
        });
        assert.deepEqual(
          asked,
          fused.map((hit) => hit.id),
        );
        for (const hit of boosted) {
          const group = groupOf(hit.id);
          const original = fused.find((each) => each.id === hit.id)!;
          if (!group) {
            assert.equal(hit.score, original.score);
            continue;
          }
          let total = 0;
          let weight = 1;
          for (const each of fused.filter((other) => groupOf(other.id) === group)) {
            total += each.score * weight;
            weight *= 0.5;
          }
          assert.equal(hit.score, original.score + 0.3 * total);
        }
        for (let i = 1; i < boosted.length; i++)
          assert.ok(
            boosted[i - 1]!.score > boosted[i]!.score ||
              (boosted[i - 1]!.score === boosted[i]!.score &&
                boosted[i - 1]!.id.localeCompare(boosted[i]!.id) < 0),
          );
      }),
      { numRuns: 300 },
    );
  });
});
