import { strict as assert } from 'node:assert';
import { LatestThrottle } from '../../src/engine/util/throttle';

describe('LatestThrottle', () => {
  it('sends the first value at once, then only the latest per interval, and what is pending on flush', async () => {
    const sent: number[] = [];
    const throttle = new LatestThrottle<number>((value) => sent.push(value), 40);
    for (let i = 1; i <= 100; i++) throttle.push(i);
    assert.deepEqual(sent, [1]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(sent, [1, 100]);
    throttle.push(101); // an interval after the last send: at once
    throttle.push(102); // just after one: held
    throttle.push(103, true); // urgent: at once, in place of the held one
    throttle.push(104);
    throttle.flush();
    throttle.flush();
    assert.deepEqual(sent, [1, 100, 101, 103, 104]);
  });
});
