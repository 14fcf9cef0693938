/**
 * Ask for help, the pure parts (src/help/format.ts): which course I may ask
 * in, the form's rules, the status item's and the panel's sentences, the
 * figures, where a taken request's notebook opens, who else is in a room.
 */
import {
  actionPath,
  cleanQuestion,
  coursesToAsk,
  figuresText,
  formatDuration,
  IHelpOverview,
  IHelpRequest,
  needsWatching,
  notebookUrl,
  othersHere,
  ownOpenRequest,
  ownStatusText,
  ownStatusTitle,
  presenceText,
  requestLine,
  validateAsk
} from '../help/format';
import { trans } from './trans';

function request(r: Partial<IHelpRequest> = {}): IHelpRequest {
  return {
    id: 4,
    group: 'cs101',
    student: { name: 'alice', display_name: 'Alice A.' },
    notebook: 'lab',
    url: '/notebook/alice/lab/lab',
    question: 'my loss is NaN',
    access: 'edit',
    state: 'waiting',
    position: 2,
    created_at: '2030-01-01T10:00:00Z',
    waited_seconds: 30,
    helper: null,
    helper_display_name: null,
    taken_at: null,
    ended_at: null,
    ...r
  };
}

const overview = (o: Partial<IHelpOverview> = {}): IHelpOverview => ({
  courses: ['cs101', 'ml'],
  queues: [],
  mine: [],
  ...o
});

describe('help: where and whether to ask', () => {
  it('offers the courses without an open hand of mine', () => {
    expect(coursesToAsk(null)).toEqual([]);
    expect(coursesToAsk(overview())).toEqual(['cs101', 'ml']);
    const mine = [request(), request({ id: 1, group: 'ml', state: 'done' })];
    expect(coursesToAsk(overview({ mine }))).toEqual(['ml']);
  });

  it('finds my open request, and watches only while there is one or a queue', () => {
    expect(ownOpenRequest(overview())).toBeNull();
    const ended = request({ state: 'thanked' });
    expect(ownOpenRequest(overview({ mine: [ended] }))).toBeNull();
    const helping = request({ state: 'helping' });
    expect(ownOpenRequest(overview({ mine: [ended, helping] }))).toBe(helping);
    expect(needsWatching(null)).toBe(false);
    expect(needsWatching(overview())).toBe(false);
    expect(needsWatching(overview({ mine: [helping] }))).toBe(true);
    const queue = { group: 'cs101', manages: true, requests: [] };
    expect(needsWatching(overview({ queues: [queue] }))).toBe(true);
  });
});

describe('help: the form', () => {
  it('keeps a question on one line', () => {
    expect(cleanQuestion('  my loss\n is   NaN \t')).toBe('my loss is NaN');
  });

  it('refuses what the controller would refuse, in words', () => {
    const ok = { group: 'cs101', question: '', access: 'edit' as const };
    expect(validateAsk(ok, trans)).toBeNull();
    expect(validateAsk({ ...ok, group: '' }, trans)).toMatch(/course/);
    expect(validateAsk({ ...ok, question: 'x'.repeat(201) }, trans)).toMatch(
      /200 characters/
    );
    // Spaces collapse before counting, as the controller does.
    expect(
      validateAsk({ ...ok, question: 'x '.repeat(100) + '    ' }, trans)
    ).toBeNull();
    expect(
      validateAsk({ ...ok, access: 'root' as unknown as 'edit' }, trans)
    ).toMatch(/edit or only watch/);
  });
});

describe('help: what the student sees', () => {
  it('says the place in the queue, then who helps', () => {
    expect(ownStatusText(request(), trans)).toBe('Help: waiting (position 2)');
    expect(ownStatusText(request({ position: null }), trans)).toBe(
      'Help: waiting'
    );
    const helping = request({
      state: 'helping',
      helper: 'ta1',
      helper_display_name: 'Tom the TA'
    });
    expect(ownStatusText(helping, trans)).toBe('Tom the TA is helping you');
    expect(
      ownStatusText({ ...helping, helper_display_name: null }, trans)
    ).toBe('ta1 is helping you');
    expect(ownStatusText(request({ state: 'done' }), trans)).toBe('');
  });

  it('recalls the question and the access in the tooltip', () => {
    expect(ownStatusTitle(request({ access: 'read' }), trans)).toBe(
      'Your hand is up in cs101 about "lab" ("my loss is NaN"; they may only watch).'
    );
    expect(ownStatusTitle(request({ question: '' }), trans)).toContain(
      'no question given; they may edit'
    );
  });
});

describe('help: what the staff see', () => {
  it('writes durations as people read them', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(Number.NaN)).toBe('—');
    expect(formatDuration(45.4)).toBe('45 s');
    expect(formatDuration(89)).toBe('89 s');
    expect(formatDuration(150)).toBe('3 min');
    expect(formatDuration(3600 + 5 * 60)).toBe('1 h 05 min');
  });

  it('gives the queue length and the medians in one line', () => {
    const queue = {
      group: 'cs101',
      manages: true,
      requests: [],
      figures: {
        waiting: 3,
        being_helped: 1,
        median_wait_seconds: 125,
        median_help_seconds: null,
        helped: 0
      }
    };
    expect(figuresText(queue, trans)).toBe(
      '3 waiting · 1 being helped · median wait 2 min · median help —'
    );
    expect(figuresText({ ...queue, figures: null }, trans)).toBe('');
  });

  it('says how long a request waits, or who helps for how long', () => {
    const now = Date.parse('2030-01-01T10:05:00Z');
    expect(requestLine(request(), now, trans)).toBe(
      'Alice A. · lab · waiting 5 min'
    );
    const taken = request({
      state: 'helping',
      helper: 'ta1',
      taken_at: '2030-01-01T10:04:00Z'
    });
    expect(requestLine(taken, now, trans)).toBe(
      'Alice A. · lab · helped by ta1 for 60 s'
    );
  });

  it('opens the notebook on the portal, and acts on the lab routes', () => {
    expect(notebookUrl(request(), 'http://lab.localhost:8000/')).toBe(
      'http://lab.localhost:8000/notebook/alice/lab/lab'
    );
    expect(notebookUrl(request(), null)).toBe('/notebook/alice/lab/lab');
    expect(
      notebookUrl(request({ url: 'https://x/notebook/a/b/lab' }), 'http://y')
    ).toBe('https://x/notebook/a/b/lab');
    expect(actionPath(request(), 'take')).toBe('help/cs101/4/take');
    expect(actionPath(request({ group: 'a b' }), 'end')).toBe(
      'help/a%20b/4/end'
    );
  });
});

describe('help: who else is in a notebook shared live', () => {
  const summary = {
    last_activity: null,
    rooms: [
      { room: 'JupyterLab:globalAwareness', editors: ['zed'], viewers: [] },
      {
        room: 'json:notebook:abc',
        editors: ['alice', 'ta1'],
        viewers: ['bob', 'ta1']
      },
      { room: 'text:file:def', editors: [], viewers: ['carol'] }
    ]
  };

  it('counts document rooms only, without me, an editor once', () => {
    expect(othersHere(summary, 'alice')).toEqual({
      editors: ['ta1'],
      viewers: ['bob', 'carol']
    });
    expect(othersHere(null, 'alice')).toEqual({ editors: [], viewers: [] });
  });

  it('says it in one line, nothing when alone', () => {
    expect(presenceText(othersHere(summary, 'alice'), trans)).toBe(
      'Live: ta1 editing · bob, carol watching'
    );
    expect(presenceText({ editors: [], viewers: [] }, trans)).toBe('');
  });
});
