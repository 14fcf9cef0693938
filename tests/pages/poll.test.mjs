// The portal pages' shared poll() (cgu_lab/controller/static/js/poll.js), run in Node
// with its clock mocked and a page reduced to what poll() reads: `document.hidden`
// and the visibility and page-hide events. `jlpm test:pages` runs it.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';

class FakeDocument extends EventTarget {
  hidden = false;
}

/** Let the round's promises settle (the mocked clock does not move setImmediate). */
const settle = () => new Promise(resolve => setImmediate(resolve));

/** A step that records its calls and answers from `answers` (an Error is thrown). */
function steps(...answers) {
  const calls = [];
  const step = async () => {
    calls.push(Date.now());
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { calls, step };
}

let poll;

beforeEach(async () => {
  globalThis.document = new FakeDocument();
  globalThis.window = new EventTarget();
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  ({ poll } = await import('../../cgu_lab/controller/static/js/poll.js'));
});

afterEach(() => {
  mock.timers.reset();
  delete globalThis.document;
  delete globalThis.window;
});

/** Move the clock by `ms`, letting each round that comes due finish. */
async function pass(ms) {
  for (let i = 0; i < ms / 100; i++) {
    mock.timers.tick(100);
    await settle();
  }
}

test('rounds go on every interval until one says there is nothing left', async () => {
  const { calls, step } = steps(true, true, false);
  const poller = poll(step, { everyMs: 1000 });
  await poller.now();
  await pass(5000);
  assert.deepEqual(calls, [0, 1000, 2000]);

  await poller.now(); // a form was sent: following starts again
  assert.equal(calls.length, 4);
});

test('failures put the next round off twice as long each time, up to maxMs; a success resets it', async () => {
  const errors = [];
  const boom = new Error('busy');
  const { calls, step } = steps(boom, boom, boom, boom, true);
  const poller = poll(step, {
    everyMs: 1000,
    maxMs: 5000,
    onError: error => errors.push(error.message)
  });
  await poller.now();
  await pass(20_000);
  // 0 fails, +2 s fails, +4 s fails, +5 s (capped) fails, +5 s succeeds, then every 1 s
  assert.deepEqual(
    calls.slice(0, 7),
    [0, 2000, 6000, 11_000, 16_000, 17_000, 18_000]
  );
  assert.deepEqual(errors, ['busy', 'busy', 'busy', 'busy']);
});

test('a hidden page is not polled; shown again, it asks at once and goes on', async () => {
  const { calls, step } = steps(true);
  const poller = poll(step, { everyMs: 1000 });
  await poller.now();
  document.hidden = true;
  document.dispatchEvent(new Event('visibilitychange'));
  await pass(10_000);
  assert.deepEqual(calls, [0]);

  document.hidden = false;
  document.dispatchEvent(new Event('visibilitychange'));
  await settle();
  await pass(1000);
  assert.deepEqual(calls, [0, 10_000, 11_000]);
});

test('a page that was left stops; one restored from the back-forward cache asks again', async () => {
  const { calls, step } = steps(true);
  const poller = poll(step, { everyMs: 1000 });
  await poller.now();
  window.dispatchEvent(new Event('pagehide'));
  await pass(5000);
  assert.deepEqual(calls, [0]);

  const restored = new Event('pageshow');
  restored.persisted = true;
  window.dispatchEvent(restored);
  await settle();
  assert.deepEqual(calls, [0, 5000]);
});

test('showing a page whose polling ended does not start it again', async () => {
  const { calls, step } = steps(false);
  const poller = poll(step, { everyMs: 1000 });
  await poller.now();
  document.hidden = true;
  document.dispatchEvent(new Event('visibilitychange'));
  document.hidden = false;
  document.dispatchEvent(new Event('visibilitychange'));
  await pass(3000);
  assert.deepEqual(calls, [0]);
});

test('paused, nothing is asked; unpaused, at once', async () => {
  const { calls, step } = steps(true);
  const poller = poll(step, { everyMs: 1000, maxMs: 5000 });
  await poller.now();
  poller.pause(true);
  await pass(5000);
  assert.deepEqual(calls, [0]);
  poller.pause(false);
  await settle();
  assert.deepEqual(calls, [0, 5000]);
});

test('rounds never overlap: now() during a round runs one more right after it', async () => {
  let release;
  let active = 0;
  let most = 0;
  let count = 0;
  const step = async () => {
    count += 1;
    active += 1;
    most = Math.max(most, active);
    if (count === 1) await new Promise(resolve => (release = resolve));
    active -= 1;
    return false;
  };
  const poller = poll(step, { everyMs: 1000 });
  const first = poller.now();
  const second = poller.now();
  await settle();
  assert.equal(count, 1);
  release();
  await Promise.all([first, second]);
  assert.equal(count, 2);
  assert.equal(most, 1);
});

test('the interval may be asked each round (the server says how often)', async () => {
  let seconds = 2;
  const { calls, step } = steps(true);
  const poller = poll(step, { everyMs: () => seconds * 1000 });
  await poller.now();
  seconds = 5; // the round at 2 s is already on the clock
  await pass(8000);
  assert.deepEqual(calls, [0, 2000, 7000]);
});
