/**
 * The React dialog bodies in a DOM (JupyterLab's jest setup from
 * @jupyterlab/testutils): each renders from its model, typing changes the
 * model, the model's problem shows in the form, and the dialogs open, refuse
 * bad input with the form kept, and close once sent.
 */
import { Dialog } from '@jupyterlab/apputils';
import { framePromise, waitForDialog } from '@jupyterlab/testutils';
import { Widget } from '@lumino/widgets';
import { act } from 'react';
import { EntryFormBody } from '../competitions/dialog';
import { ICompetition } from '../competitions/format';
import { ResizeBody } from '../resources/resize';
import { connectFromForm, SerialForm } from '../serial/dialog';
import { ISerial, ISerialPort } from '../serial/webSerial';
import { openSubmitDialog, SubmitBody } from '../submit/dialog';
import { openTemplateDialog, TemplateBody } from '../templates/dialog';
import {
  IAssignment,
  IFileListing,
  IQuota,
  IResources,
  ITemplateOptions
} from '../apiTypes';
import { trans } from './trans';

// React 18's act() in a test environment.
(globalThis as any).IS_REACT_ACT_ENVIRONMENT = true;

/** Attach a ReactWidget and let React render it. */
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

/** Type into a controlled input or choose in a select, as a user does. */
async function typeInto(
  node: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
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

const HOME: { [folder: string]: IFileListing } = {
  '': {
    path: '',
    entries: [
      {
        name: 'hw.ipynb',
        path: 'hw.ipynb',
        type: 'file',
        size: 100,
        files: 1,
        excluded: false
      },
      {
        name: 'data',
        path: 'data',
        type: 'directory',
        size: 300,
        files: 1,
        excluded: false
      }
    ]
  } as IFileListing,
  data: {
    path: 'data',
    entries: [
      {
        name: 'iris.csv',
        path: 'data/iris.csv',
        type: 'file',
        size: 300,
        files: 1,
        excluded: false
      }
    ]
  } as IFileListing
};
const files = async (path: string): Promise<IFileListing> =>
  HOME[path] ?? ({ path, entries: [] } as unknown as IFileListing);

function assignment(a: Partial<IAssignment>): IAssignment {
  return {
    id: 1,
    group: 'cs101',
    name: 'lab',
    title: '',
    description: '',
    deadline: null,
    allow_late: false,
    open: true,
    max_bytes: 1_000_000,
    submissions: 0,
    last_submitted_at: null,
    ...a
  };
}

function competition(c: Partial<ICompetition>): ICompetition {
  return {
    id: 1,
    group: 'cs101',
    title: 'Cats or dogs',
    ends_at: '2030-01-01T00:00:00Z',
    metric_title: 'accuracy',
    id_column: 'id',
    target_column: 'label',
    max_bytes: 1_000_000,
    url: '',
    ...c
  };
}

afterEach(() => {
  document.body.innerHTML = '';
});

describe('Serial form', () => {
  const arduino = {
    getInfo: () => ({ usbVendorId: 0x2341, usbProductId: 0x43 })
  };
  const serial =
    (port: unknown): (() => ISerial) =>
    () =>
      ({ requestPort: async () => port }) as unknown as ISerial;

  it('shows the defaults, the chosen device and the problem', async () => {
    const form = await show(
      new SerialForm(trans, { baudRate: 9600, parity: 'even' }, serial(arduino))
    );
    expect(q<HTMLInputElement>(form.node, 'serial-baud').value).toBe('9600');
    expect(q<HTMLSelectElement>(form.node, 'serial-parity').value).toBe('even');
    expect(q(form.node, 'serial-device').textContent).toBe('none chosen');
    expect(q(form.node, 'serial-error').hidden).toBe(true);

    await click(q(form.node, 'serial-choose'));
    expect(q(form.node, 'serial-device').textContent).toBe(
      'Arduino (2341:0043)'
    );

    await typeInto(q<HTMLInputElement>(form.node, 'serial-baud'), '12.5');
    await typeInto(q<HTMLSelectElement>(form.node, 'serial-stop-bits'), '2');
    expect(form.model.fields.stopBits).toBe('2');
    const manager = { connect: jest.fn(async () => undefined) };
    await act(async () => {
      expect(await connectFromForm(manager, form.model)).toBe(false);
    });
    expect(manager.connect).not.toHaveBeenCalled();
    expect(q(form.node, 'serial-error').textContent).toBe(
      'The baud rate must be a whole number, such as 115200.'
    );
    expect(q(form.node, 'serial-error').hidden).toBe(false);

    await typeInto(q<HTMLInputElement>(form.node, 'serial-baud'), '115200');
    await act(async () => {
      expect(await connectFromForm(manager, form.model)).toBe(true);
    });
    expect(manager.connect).toHaveBeenCalledWith(arduino, {
      baudRate: 115200,
      dataBits: 8,
      stopBits: 2,
      parity: 'even',
      flowControl: 'none'
    });
    act(() => form.dispose());
  });

  it('says to choose a device when the chooser was closed', async () => {
    const closed = Object.assign(new Error('none'), { name: 'NotFoundError' });
    const form = await show(
      new SerialForm(
        trans,
        { baudRate: 9600 },
        () =>
          ({
            requestPort: async () => Promise.reject(closed)
          }) as unknown as ISerial
      )
    );
    const manager = { connect: jest.fn(async (_p: ISerialPort) => undefined) };
    await act(async () => {
      expect(await connectFromForm(manager, form.model)).toBe(false);
    });
    expect(q(form.node, 'serial-error').textContent).toBe(
      'Choose a device first.'
    );
    act(() => form.dispose());
  });
});

const OPEN: IAssignment = assignment({
  id: 1,
  name: 'lab1',
  title: 'Lab 1',
  max_bytes: 1000
});
const CLOSED: IAssignment = assignment({
  id: 2,
  name: 'lab0',
  title: 'Lab 0',
  open: false
});

describe('Submit dialog', () => {
  it('renders the assignments, the picker and the note from its model', async () => {
    const body = await show(
      new SubmitBody({
        assignments: [CLOSED, OPEN],
        assignmentId: null,
        initialPaths: ['hw.ipynb'],
        suggestions: [
          {
            path: 'data/iris.csv',
            type: 'file',
            size: 300,
            files: 1,
            why: 'reads'
          }
        ],
        files,
        trans
      })
    );
    await act(async () => {
      await body.model.ready;
    });
    const rows = body.node.querySelectorAll('[data-cgu="submit-assignment"]');
    expect([...rows].map(r => r.getAttribute('data-assignment-id'))).toEqual([
      '1',
      '2'
    ]);
    const radios = body.node.querySelectorAll<HTMLInputElement>(
      '[data-cgu="submit-assignment-radio"]'
    );
    expect(radios[0].checked).toBe(true);
    expect(radios[1].disabled).toBe(true);
    expect(q(body.node, 'submit-suggestion-total').textContent).toBe(
      '1 preselected item included: 300 B'
    );
    expect(q(body.node, 'file-picker')).toBeTruthy();

    await typeInto(
      q<HTMLTextAreaElement>(body.node, 'submit-note'),
      '  late, sorry  '
    );
    expect(body.getValue()).toEqual({
      assignment: OPEN,
      paths: ['data/iris.csv', 'hw.ipynb'],
      note: 'late, sorry'
    });
    await act(async () => body.showError('Too big'));
    expect(q(body.node, 'submit-error').textContent).toBe('Too big');
    await act(async () => body.setBusy(true));
    expect(q(body.node, 'submit-progress').hidden).toBe(false);
    expect(body.node.getAttribute('aria-busy')).toBe('true');
    act(() => body.dispose());
  });

  it('sends the choices and resolves with the receipt', async () => {
    const submit = jest.fn(async () => ({ id: 7 }) as any);
    const onSubmitted = jest.fn();
    const opened = openSubmitDialog({
      assignments: [OPEN],
      assignmentId: 1,
      initialPaths: ['hw.ipynb'],
      files,
      trans,
      submit,
      onSubmitted
    });
    await act(async () => {
      await waitForDialog();
    });
    const dialog = document.body.querySelector(
      '.cgu-SubmitDialog'
    ) as HTMLElement;
    expect(dialog).toBeTruthy();
    await act(async () => {
      await framePromise();
    });
    await click(q(dialog, 'submit-send'));
    await act(async () => {
      await opened;
    });
    expect(submit).toHaveBeenCalledWith({
      assignment_id: 1,
      paths: ['hw.ipynb'],
      note: ''
    });
    expect(onSubmitted).toHaveBeenCalledWith({ id: 7 });
    expect(await opened).toEqual({ id: 7 });
  });
});

const TEMPLATE_OPTIONS: ITemplateOptions = {
  can_publish: true,
  max_bytes: 10_000,
  templates: [
    { name: 'ml-intro', display_name: 'ML intro', latest_version: 2 } as any
  ],
  groups: [{ name: 'cs101', display_name: 'CS 101' } as any],
  environments: [{ name: 'python', display_name: 'Python' } as any],
  defaults: {
    environment: 'python',
    cpu_milli: 2000,
    memory: 4 * 1024 ** 3,
    gpu_type: '',
    gpus: 0
  }
} as unknown as ITemplateOptions;

describe('Save as template dialog', () => {
  it('follows the display name, offers new versions and keeps GPUs with a type', async () => {
    const body = await show(
      new TemplateBody({
        options: TEMPLATE_OPTIONS,
        gpuTypes: [{ name: 'a5000', display_name: 'A5000', capacity: 4 }],
        initialPaths: ['hw.ipynb'],
        displayName: 'Week 1',
        files,
        trans
      })
    );
    const name = q<HTMLInputElement>(body.node, 'template-name');
    expect(name.value).toBe('week-1');
    await typeInto(
      q<HTMLInputElement>(body.node, 'template-display-name'),
      'Deep Learning'
    );
    expect(name.value).toBe('deep-learning');

    await typeInto(
      q<HTMLSelectElement>(body.node, 'template-existing'),
      'ml-intro'
    );
    expect(name.value).toBe('ml-intro');
    expect(name.readOnly).toBe(true);

    const group = q<HTMLSelectElement>(body.node, 'template-group');
    expect(group.disabled).toBe(true);
    await click(q(body.node, 'template-visibility-group'));
    expect(group.disabled).toBe(false);

    const gpus = q<HTMLInputElement>(body.node, 'template-gpus');
    expect(gpus.disabled).toBe(true);
    await typeInto(
      q<HTMLSelectElement>(body.node, 'template-gpu-type'),
      'a5000'
    );
    expect(gpus.disabled).toBe(false);
    expect(gpus.value).toBe('1');

    const value = body.getValue();
    expect(value.name).toBe('ml-intro');
    expect(value.visibility).toBe('group');
    expect(value.group).toBe('cs101');
    expect(value.resources).toEqual({
      cpus: 2,
      memoryGiB: 4,
      gpuType: 'a5000',
      gpus: 1
    });
    act(() => body.dispose());
  });

  it('shows a bad name beside the field and keeps the dialog open', async () => {
    const create = jest.fn();
    const opened = openTemplateDialog({
      options: TEMPLATE_OPTIONS,
      gpuTypes: [],
      initialPaths: ['hw.ipynb'],
      files,
      trans,
      create,
      onCreated: jest.fn()
    });
    await act(async () => {
      await waitForDialog();
      await framePromise();
    });
    const dialog = document.body.querySelector(
      '.cgu-TemplateDialog'
    ) as HTMLElement;
    await typeInto(q<HTMLInputElement>(dialog, 'template-name'), 'Bad Name!');
    expect(q(dialog, 'template-version-note').className).toContain(
      'cgu-mod-error'
    );
    expect(q(dialog, 'template-name').getAttribute('aria-invalid')).toBe(
      'true'
    );
    await click(q(dialog, 'template-save'));
    expect(create).not.toHaveBeenCalled();
    expect(q(dialog, 'template-error').hidden).toBe(false);
    await act(async () => {
      (dialog.querySelector('.jp-mod-reject') as HTMLElement).click();
      await opened;
    });
    expect(await opened).toBeNull();
  });
});

describe('Resize and competition forms', () => {
  it('resize: the notebook size as typed, no GPUs without a type', async () => {
    const GiB = 1024 ** 3;
    const quota: IQuota = {
      limits: {
        cpu_milli: 4000,
        memory: 8 * GiB,
        gpus: { standard: 2 },
        notebooks: 3
      },
      usage: { cpu_milli: 500, memory: 2 * GiB, gpus: {}, notebooks: 1 },
      gpu_types: [
        { name: 'standard', display_name: 'Standard (shared)', capacity: 8 }
      ]
    };
    const resources = {
      requested: {
        cpu_milli: 500,
        memory: 2 * 1024 ** 3,
        gpu_type: '',
        gpus: 0
      }
    } as unknown as IResources;
    const body = await show(new ResizeBody(quota, resources, trans));
    expect(q<HTMLInputElement>(body.node, 'resize-cpus').value).toBe('0.5');
    await typeInto(q<HTMLInputElement>(body.node, 'resize-cpus'), '2');
    expect(body.getValue()).toEqual({
      cpus: 2,
      memoryGiB: 2,
      gpuType: '',
      gpus: 0
    });
    await act(async () =>
      body.showError('your quota allows 1 GPU; you asked 2')
    );
    expect(q(body.node, 'resize-error').textContent).toContain(
      'your quota allows'
    );
    act(() => body.dispose());
  });

  it('competition: a code competition takes the open notebook', async () => {
    const body = await show(
      new EntryFormBody(
        [
          competition({ id: 3, kind: 'predictions' }),
          competition({ id: 4, kind: 'code' })
        ],
        'preds.csv',
        trans,
        'model.ipynb'
      )
    );
    const path = q<HTMLInputElement>(body.node, 'competition-path');
    expect(path.value).toBe('preds.csv');
    await typeInto(q<HTMLSelectElement>(body.node, 'competition-select'), '4');
    expect(path.value).toBe('model.ipynb');
    expect(
      body.node.querySelector('label[for="' + path.id + '"]')?.textContent
    ).toBe('Notebook');
    await typeInto(q<HTMLSelectElement>(body.node, 'competition-select'), '3');
    expect(body.getValue()).toEqual({
      competitionId: 3,
      path: 'preds.csv',
      note: ''
    });
    act(() => body.dispose());
  });
});

// The dialogs' own Dialog is JupyterLab's: nothing left open between tests.
afterAll(() => {
  Dialog.flush();
});
