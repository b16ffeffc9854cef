import { expect } from '@open-wc/testing';
import { choose, type Switch, syncSwitch } from '../../src/workflow-list/switch-queue.js';

/** A service whose answers the test releases one at a time; it records each request. */
function service() {
  const sent: boolean[] = [];
  const pending: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  const send = (on: boolean) => {
    sent.push(on);
    return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
  };
  /** Settles the oldest request, then lets the queue go on to its next step. */
  const answer = async (error?: unknown) => {
    const next = pending.shift()!;
    if (error) next.reject(error);
    else next.resolve();
    await new Promise((resolve) => setTimeout(resolve));
  };
  return {
    sent,
    send,
    answer,
    get waiting() {
      return pending.length;
    },
  };
}

/** A click on the switch, as the element handles it: the queue runs only when none is under way. */
function clicker(row: Switch, send: (on: boolean) => Promise<unknown>, signal = new AbortController().signal) {
  const confirmed: boolean[] = [];
  let run: ReturnType<typeof syncSwitch> | undefined;
  const click = (on: boolean) => {
    if (choose(row, on)) run = syncSwitch(row, send, (done) => confirmed.push(done), signal);
  };
  return { click, confirmed, settled: () => run };
}

describe('switch queue', () => {
  it('sends one request per click when each settles first', async () => {
    const row: Switch = { active: false, wanted: false };
    const s = service();
    const { click, confirmed } = clicker(row, s.send);
    click(true);
    await s.answer();
    click(false);
    await s.answer();
    expect(s.sent).to.deep.equal([true, false]);
    expect(confirmed).to.deep.equal([true, false]);
    expect(row).to.include({ active: false, wanted: false, busy: false });
  });

  it('queues a second click made while a request is under way, and sends it once that settles', async () => {
    const row: Switch = { active: false, wanted: false };
    const s = service();
    const { click, confirmed } = clicker(row, s.send);
    click(true);
    click(false);
    // The switch shows the latest choice at once; only one request is out.
    expect(row.wanted).to.equal(false);
    expect(s.sent).to.deep.equal([true]);
    await s.answer();
    expect(s.sent).to.deep.equal([true, false]);
    await s.answer();
    expect(confirmed).to.deep.equal([true, false]);
    expect(row).to.include({ active: false, wanted: false, busy: false });
  });

  it('sends nothing more when the clicks made meanwhile end where the service now is', async () => {
    const row: Switch = { active: false, wanted: false };
    const s = service();
    const { click } = clicker(row, s.send);
    click(true);
    click(false);
    click(true);
    await s.answer();
    expect(s.sent).to.deep.equal([true]);
    expect(s.waiting).to.equal(0);
    expect(row).to.include({ active: true, wanted: true, busy: false });
  });

  it('moves the switch back and reports which way the refused request went', async () => {
    const row: Switch = { active: true, wanted: true };
    const s = service();
    const { click, confirmed, settled } = clicker(row, s.send);
    click(false);
    const refused = new Error('refused');
    await s.answer(refused);
    expect(await settled()).to.deep.equal({ on: false, error: refused });
    expect(confirmed).to.deep.equal([]);
    expect(row).to.include({ active: true, wanted: true, busy: false });
  });

  it('touches the row no more once the element is removed', async () => {
    const row: Switch = { active: false, wanted: false };
    const s = service();
    const removed = new AbortController();
    const { click, confirmed, settled } = clicker(row, s.send, removed.signal);
    click(true);
    removed.abort();
    await s.answer();
    expect(await settled()).to.equal(undefined);
    expect(confirmed).to.deep.equal([]);
    expect(row.active).to.equal(false);
  });
});
