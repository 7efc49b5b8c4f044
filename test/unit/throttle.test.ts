import { strict as assert } from 'node:assert';
import { LatestThrottle } from '../../src/engine/util/throttle';

describe('LatestThrottle', () => {
  it('sends the first value at once, holds the rest to the latest, and sends it on flush or after the interval', async () => {
    const sent: number[] = [];
    const throttle = new LatestThrottle<number>((value) => sent.push(value), 40);
    for (let i = 1; i <= 100; i++) throttle.push(i);
    assert.deepEqual(sent, [1]);
    throttle.flush();
    assert.deepEqual(sent, [1, 100]);
    throttle.push(101); // just after a send: held
    assert.deepEqual(sent, [1, 100]);
    throttle.push(102, true); // urgent: at once, in place of the held one
    throttle.flush(); // nothing pending
    assert.deepEqual(sent, [1, 100, 102]);
    throttle.push(103); // held, then sent by the timer
    for (let waited = 0; sent.length < 4 && waited < 2000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(sent, [1, 100, 102, 103]);
  });
});
