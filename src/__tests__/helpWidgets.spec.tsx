/**
 * Ask for help in a DOM: the dialog's form (course, one-line question, edit or
 * watch), its refusal kept in the form, its sending; the model's polling and
 * actions on a fake transport; the student's status item with Cancel and
 * Thanks; the staff panel with its figures, Take and Done.
 */
import { framePromise, waitForDialog } from '@jupyterlab/testutils';
import { Widget } from '@lumino/widgets';
import { act } from 'react';
import { HelpAskBody, openHelpDialog } from '../help/dialog';
import { IHelpOverview, IHelpRequest } from '../help/format';
import { HelpModel, IHelpTransport } from '../help/model';
import { HelpPanel } from '../help/panel';
import { HelpStatusItem } from '../help/status';
import { trans } from './trans';

(globalThis as any).IS_REACT_ACT_ENVIRONMENT = true;

async function show<T extends Widget>(widget: T): Promise<T> {
  await act(async () => {
    Widget.attach(widget, document.body);
    await framePromise();
  });
  return widget;
}

function q<E extends Element = HTMLElement>(root: Element, cgu: string): E {
  const node = root.querySelector<E>(`[data-cgu="${cgu}"]`);
  if (!node) {
    throw new Error(`no [data-cgu="${cgu}"]`);
  }
  return node;
}

async function typeInto(
  node: HTMLInputElement | HTMLSelectElement,
  value: string
): Promise<void> {
  await act(async () => {
    const proto = Object.getPrototypeOf(node);
    Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(node, value);
    node.dispatchEvent(
      new Event(node instanceof HTMLSelectElement ? 'change' : 'input', {
        bubbles: true
      })
    );
  });
}

async function click(node: HTMLElement): Promise<void> {
  await act(async () => {
    node.click();
    await Promise.resolve();
  });
}

function request(r: Partial<IHelpRequest> = {}): IHelpRequest {
  return {
    id: 4,
    group: 'cs101',
    student: { name: 'alice', display_name: 'Alice A.' },
    notebook: 'lab',
    url: '/notebook/alice/lab/lab',
    question: '',
    access: 'edit',
    state: 'waiting',
    position: 1,
    created_at: new Date().toISOString(),
    waited_seconds: 0,
    helper: null,
    helper_display_name: null,
    taken_at: null,
    ended_at: null,
    ...r
  };
}

/** A transport whose overview the test sets, recording what was sent. */
function fakeTransport(first: IHelpOverview) {
  const sent: string[] = [];
  const state = { overview: first };
  const transport: IHelpTransport = {
    overview: jest.fn(async () => JSON.parse(JSON.stringify(state.overview))),
    ask: jest.fn(async body =>
      request({ group: body.group, question: body.question })
    ),
    act: jest.fn(async path => {
      sent.push(path);
      return request({
        state: path.endsWith('take') ? 'helping' : 'done',
        helper: 'ta1'
      });
    })
  };
  return { transport, sent, state };
}

describe('Ask for help dialog', () => {
  it('offers the courses, keeps the question on one line, and chooses the access', async () => {
    const body = await show(new HelpAskBody(['cs101', 'ml'], 'lab', trans));
    expect(body.node.textContent).toContain('joins you in "lab" live');
    const course = q<HTMLSelectElement>(body.node, 'help-course');
    expect(course.value).toBe('cs101');
    await typeInto(course, 'ml');
    await typeInto(
      q<HTMLInputElement>(body.node, 'help-question'),
      'my loss is NaN'
    );
    expect(q<HTMLInputElement>(body.node, 'help-question').value).toBe(
      'my loss is NaN'
    );
    // A pasted line break becomes a space (the input itself drops it).
    act(() => body.model.setQuestion('a\r\nb'));
    expect(body.model.question).toBe('a b');
    act(() => body.model.setQuestion('my loss is NaN'));
    expect(q<HTMLInputElement>(body.node, 'help-access-edit').checked).toBe(
      true
    );
    await click(q(body.node, 'help-access-read'));
    expect(body.getValue()).toEqual({
      group: 'ml',
      question: 'my loss is NaN',
      access: 'read'
    });
    await act(async () => body.showError('your hand is already raised'));
    expect(q(body.node, 'help-error').textContent).toBe(
      'your hand is already raised'
    );
    expect(q(body.node, 'help-error').hidden).toBe(false);
    act(() => body.dispose());
  });

  it('shows no course choice for one course', async () => {
    const body = await show(new HelpAskBody(['cs101'], 'lab', trans));
    expect(body.node.querySelector('[data-cgu="help-course"]')).toBeNull();
    expect(body.getValue().group).toBe('cs101');
    act(() => body.dispose());
  });

  it('keeps the form open with the refusal, then sends and resolves', async () => {
    const send = jest
      .fn()
      .mockRejectedValueOnce(new Error('your hand is already raised'))
      .mockResolvedValueOnce(request({ id: 9 }));
    const opened = openHelpDialog({
      courses: ['cs101'],
      notebook: 'lab',
      send,
      trans
    });
    await act(async () => {
      await waitForDialog();
      await framePromise();
    });
    const dialog = document.body.querySelector(
      '.cgu-HelpDialog'
    ) as HTMLElement;
    expect(dialog).toBeTruthy();
    await typeInto(q<HTMLInputElement>(dialog, 'help-question'), ' why? ');
    await click(q(dialog, 'help-send'));
    await act(async () => {
      await framePromise();
    });
    expect(q(dialog, 'help-error').textContent).toBe(
      'your hand is already raised'
    );
    expect(document.body.contains(dialog)).toBe(true);
    await click(q(dialog, 'help-send'));
    await act(async () => {
      await opened;
    });
    expect(send).toHaveBeenLastCalledWith({
      group: 'cs101',
      question: 'why?',
      access: 'edit'
    });
    expect((await opened)?.id).toBe(9);
  });
});

describe('Help model, status item and panel', () => {
  it('follows my request: position, then helper and Thanks', async () => {
    const { transport, sent, state } = fakeTransport({
      courses: ['cs101'],
      queues: [],
      mine: [request({ position: 2 })]
    });
    const model = new HelpModel(transport, () => false);
    const ended: IHelpRequest[] = [];
    const item = await show(
      new HelpStatusItem(model, trans, async r => {
        ended.push(r);
        await model.end(r);
      })
    );
    expect(item.isHidden).toBe(true);
    await act(async () => {
      model.start();
      await model.ready;
    });
    expect(item.active).toBe(true);
    expect(q(item.node, 'help-status-text').textContent).toBe(
      'Help: waiting (position 2)'
    );
    expect(q(item.node, 'help-cancel')).toBeTruthy();
    state.overview = {
      courses: ['cs101'],
      queues: [],
      mine: [
        request({
          state: 'helping',
          helper: 'ta1',
          helper_display_name: 'Tom',
          position: null
        })
      ]
    };
    await act(async () => model.refresh());
    expect(q(item.node, 'help-status-text').textContent).toBe(
      'Tom is helping you'
    );
    state.overview = { courses: ['cs101'], queues: [], mine: [] };
    await click(q(item.node, 'help-thanks'));
    await act(async () => model.refresh());
    expect(ended.map(r => r.state)).toEqual(['helping']);
    expect(sent).toEqual(['help/cs101/4/end']);
    expect(item.active).toBe(false);
    expect(item.isHidden).toBe(true);
    act(() => item.dispose());
    model.dispose();
  });

  it('lists the queues with their figures; Take and Done call their routes', async () => {
    const queue = {
      group: 'cs101',
      manages: true,
      requests: [
        request({ question: 'my loss is NaN' }),
        request({
          id: 5,
          student: { name: 'bob', display_name: 'Bob' },
          state: 'helping',
          helper: 'ta1',
          taken_at: new Date().toISOString(),
          position: null
        })
      ],
      figures: {
        waiting: 1,
        being_helped: 1,
        median_wait_seconds: 120,
        median_help_seconds: 300,
        helped: 4
      }
    };
    const { transport, sent } = fakeTransport({
      courses: [],
      queues: [queue],
      mine: []
    });
    const model = new HelpModel(transport, () => false);
    const opened: IHelpRequest[] = [];
    const panel = await show(
      new HelpPanel({
        model,
        trans,
        me: 'ta1',
        take: async r => {
          const taken = await model.take(r);
          opened.push(taken);
        },
        open: r => opened.push(r),
        done: async r => {
          await model.end(r);
        }
      })
    );
    await act(async () => {
      model.start();
      await model.ready;
    });
    expect(q(panel.node, 'help-figures').textContent).toBe(
      '1 waiting · 1 being helped · median wait 2 min · median help 5 min'
    );
    const rows = panel.node.querySelectorAll('[data-cgu="help-request"]');
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain('my loss is NaN');
    await click(q(rows[0], 'help-take'));
    await act(async () => framePromise());
    expect(sent).toEqual(['help/cs101/4/take']);
    expect(opened.map(r => r.state)).toEqual(['helping']);
    // Bob's request is mine: Open and Done.
    const bob = panel.node.querySelector('[data-student="bob"]')!;
    await click(q(bob, 'help-open'));
    expect(opened).toHaveLength(2);
    await click(q(bob, 'help-done'));
    await act(async () => framePromise());
    expect(sent).toEqual(['help/cs101/4/take', 'help/cs101/5/end']);
    act(() => panel.dispose());
    model.dispose();
  });

  it('stands by once the page has ended', async () => {
    const { transport } = fakeTransport({ courses: [], queues: [], mine: [] });
    const model = new HelpModel(transport, () => true);
    model.start();
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(transport.overview).not.toHaveBeenCalled();
    model.dispose();
  });
});
