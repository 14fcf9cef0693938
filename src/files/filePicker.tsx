/**
 * The file picker of the Save-as-template and Submit dialogs: the home as a
 * tree that lists folders when they are opened, with checkboxes, sizes and
 * file counts, excluded entries greyed out with the reason, the total of the
 * selection against a size limit, and (for templates) an editable list of
 * excluded patterns.
 *
 * A React component over a `PickerModel` (model.ts; the selection rules are
 * the pure functions of selection.ts) that the dialog's own model holds.
 */
import * as React from 'react';
import { CguAPI } from '../api';
import { useModel } from '../useModel';
import { IFilePickerOptions, PickerModel } from './model';
import { PatternFieldset } from './patterns';
import { PickerTree } from './tree';
export type { IFilePickerOptions } from './model';

/** A picker's model that lists the home through the API unless told otherwise. */
export function createPickerModel(options: IFilePickerOptions): PickerModel {
  return new PickerModel({ ...options, fetch: options.fetch ?? CguAPI.files });
}

/**
 * Handle Enter inside the picker before the dialog does: in the pattern box
 * it adds the pattern, on a checkbox it toggles it (instead of accepting
 * the whole dialog). True when handled.
 */
export function pickerKeydown(
  model: PickerModel,
  event: KeyboardEvent
): boolean {
  const target = event.target;
  if (
    event.key !== 'Enter' ||
    !(target instanceof HTMLInputElement) ||
    !target.closest('[data-cgu="file-picker"]')
  ) {
    return false;
  }
  if (target.dataset.cgu === 'picker-pattern-input') {
    model.addPattern();
  } else if (target.type === 'checkbox') {
    if (!target.disabled) {
      target.click();
    }
  } else {
    return false;
  }
  event.preventDefault();
  event.stopPropagation();
  return true;
}

/** The picker: the tree and, for templates, the excluded patterns. */
export function FilePickerView(props: { model: PickerModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const ref = React.useRef<HTMLDivElement>(null);
  React.useEffect(() => {
    const focus = (): void => {
      ref.current
        ?.querySelector<HTMLInputElement>('[data-cgu="picker-pattern-input"]')
        ?.focus();
    };
    model.focusRequested.connect(focus);
    return () => {
      model.focusRequested.disconnect(focus);
    };
  }, [model]);
  const over = model.warning !== null;
  return (
    <div
      ref={ref}
      className={over ? 'cgu-Picker cgu-mod-over' : 'cgu-Picker'}
      data-cgu="file-picker"
    >
      <PickerTree model={model} />
      {model.options.editablePatterns ? (
        <PatternFieldset model={model} />
      ) : null}
    </div>
  );
}
