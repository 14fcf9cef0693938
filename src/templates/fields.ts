/**
 * Pieces of the Save-as-template form: a labelled field, who may use the
 * template, its environment and default resources, and the error and
 * progress lines.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { h, uniqueId } from '../dom';
import { formatNumber } from '../format';
import { ITemplateForm } from './format';
import { IGpuType, ITemplateOptions, TemplateVisibility } from '../apiTypes';

/** A labelled form field, with an optional note that describes the input. */
export function formField(
  label: string,
  input: HTMLElement,
  note?: string | HTMLElement
): HTMLElement {
  let noteNode: HTMLElement | null = null;
  if (note) {
    noteNode =
      typeof note === 'string'
        ? h('span', { class: 'cgu-Form-note' }, note)
        : note;
    noteNode.id = noteNode.id || uniqueId('cgu-template-note');
    input.setAttribute('aria-describedby', noteNode.id);
  }
  return h(
    'div',
    { class: 'cgu-Form-field' },
    h('label', { for: input.id }, label),
    input,
    noteNode
  );
}

/** Who may use the template: everyone, a group (with its select) or only me. */
export function visibilityFieldset(
  o: ITemplateOptions,
  form: ITemplateForm,
  trans: TranslationBundle
): { visibility: HTMLElement; group: HTMLSelectElement } {
  const name = uniqueId('cgu-template-visibility');
  const group = groupSelect(o, form, trans);
  const choice = (
    value: TemplateVisibility,
    label: string,
    extra: HTMLElement | null,
    disabled = false
  ) => visibilityChoice({ name, value, label, extra, disabled, form, group });
  const visibility = h(
    'fieldset',
    { class: 'cgu-Form-fieldset' },
    h('legend', {}, trans.__('Who may use it')),
    choice('public', trans.__('Everyone on the platform'), null),
    choice(
      'group',
      o.groups.length
        ? trans.__('A group:')
        : trans.__('A group (you belong to none)'),
      o.groups.length ? group : null,
      o.groups.length === 0
    ),
    choice('private', trans.__('Only me'), null)
  );
  return { visibility, group };
}

/** The select of the group that may use the template. */
function groupSelect(
  o: ITemplateOptions,
  form: ITemplateForm,
  trans: TranslationBundle
): HTMLSelectElement {
  return h(
    'select',
    {
      id: uniqueId('cgu-template-group'),
      class: 'jp-mod-styled',
      'aria-label': trans.__('Group that may use the template'),
      'data-cgu': 'template-group',
      disabled: form.visibility !== 'group' || o.groups.length === 0
    },
    ...o.groups.map(g =>
      h(
        'option',
        { value: g.name, selected: g.name === form.group },
        g.display_name || g.name
      )
    )
  );
}

/** One radio button of the visibility fieldset. */
function visibilityChoice(choice: {
  /** The radio group's name. */
  name: string;
  value: TemplateVisibility;
  label: string;
  extra: HTMLElement | null;
  disabled: boolean;
  form: ITemplateForm;
  /** Enabled only while "group" is checked. */
  group: HTMLSelectElement;
}): HTMLElement {
  const { value, group } = choice;
  const id = uniqueId(`cgu-template-visibility-${value}`);
  return h(
    'div',
    { class: 'cgu-Form-radio' },
    h('input', {
      type: 'radio',
      id,
      name: choice.name,
      value,
      checked: choice.form.visibility === value,
      disabled: choice.disabled,
      'data-cgu': `template-visibility-${value}`,
      onchange: () => {
        group.disabled = value !== 'group';
      }
    }),
    h('label', { for: id }, choice.label),
    choice.extra
  );
}

/** The environment select and the default resources of the template. */
export function environmentFields(
  o: ITemplateOptions,
  form: ITemplateForm,
  gpuTypes: ReadonlyArray<IGpuType>,
  trans: TranslationBundle
): {
  environment: HTMLSelectElement;
  cpus: HTMLInputElement;
  memory: HTMLInputElement;
  gpuType: HTMLSelectElement;
  gpus: HTMLInputElement;
} {
  const environment = environmentSelect(o, form);
  const r = form.resources;
  const cpus = amountInput('cpus', r.cpus);
  const memory = amountInput('memory', r.memoryGiB);
  const gpuType = gpuTypeSelect(gpuTypes, r.gpuType, trans, () =>
    syncGpuCount(gpuType, gpus)
  );
  const gpus = h('input', {
    type: 'number',
    id: uniqueId('cgu-template-gpus'),
    class: 'jp-mod-styled',
    min: 0,
    step: 1,
    value: r.gpus,
    disabled: !r.gpuType,
    'data-cgu': 'template-gpus'
  });
  return { environment, cpus, memory, gpuType, gpus };
}

/** The environments offered, plus the form's own when the server lacks it. */
function environmentSelect(
  o: ITemplateOptions,
  form: ITemplateForm
): HTMLSelectElement {
  const environment = h(
    'select',
    {
      id: uniqueId('cgu-template-environment'),
      class: 'jp-mod-styled',
      'data-cgu': 'template-environment'
    },
    ...o.environments.map(e =>
      h(
        'option',
        { value: e.name, selected: e.name === form.environment },
        e.display_name || e.name
      )
    )
  );
  if (
    form.environment &&
    !o.environments.some(e => e.name === form.environment)
  ) {
    environment.appendChild(
      h('option', { value: form.environment, selected: true }, form.environment)
    );
  }
  return environment;
}

/** The CPUs or memory (GiB) input. */
function amountInput(what: 'cpus' | 'memory', value: number): HTMLInputElement {
  return h('input', {
    type: 'number',
    id: uniqueId(`cgu-template-${what}`),
    class: 'jp-mod-styled',
    min: 0.1,
    step: 'any',
    value: formatNumber(value, 3),
    'data-cgu': `template-${what}`
  });
}

/** "No GPU" and the GPU types, plus the form's own when not offered. */
function gpuTypeSelect(
  gpuTypes: ReadonlyArray<IGpuType>,
  selected: string,
  trans: TranslationBundle,
  onchange: () => void
): HTMLSelectElement {
  const types = [...gpuTypes];
  if (selected && !types.some(t => t.name === selected)) {
    types.push({ name: selected, display_name: selected, capacity: 0 });
  }
  return h(
    'select',
    {
      id: uniqueId('cgu-template-gpu-type'),
      class: 'jp-mod-styled',
      'data-cgu': 'template-gpu-type',
      onchange
    },
    h('option', { value: '', selected: !selected }, trans.__('No GPU')),
    ...types.map(t =>
      h(
        'option',
        { value: t.name, selected: t.name === selected },
        t.display_name || t.name
      )
    )
  );
}

/** No GPU type means no GPUs; a GPU type means at least one. */
function syncGpuCount(gpuType: HTMLSelectElement, gpus: HTMLInputElement) {
  const type = gpuType.value;
  gpus.disabled = !type;
  if (!type) {
    gpus.value = '0';
  } else if (Number(gpus.value) < 1) {
    gpus.value = '1';
  }
}

/** The error line and the progress bar shown while saving. */
export function progressParts(trans: TranslationBundle): {
  error: HTMLElement;
  progressText: HTMLElement;
  progress: HTMLElement;
} {
  const error = h('div', {
    class: 'cgu-Form-error',
    role: 'alert',
    'data-cgu': 'template-error',
    hidden: true
  });
  const progressText = h('span', { class: 'cgu-Form-note' });
  const progressId = uniqueId('cgu-template-progress');
  const progress = h(
    'div',
    {
      class: 'cgu-Progress',
      'data-cgu': 'template-progress',
      hidden: true
    },
    h('progress', {
      id: progressId,
      class: 'cgu-Progress-bar',
      'aria-label': trans.__('Saving the template')
    }),
    progressText
  );
  return { error, progressText, progress };
}
