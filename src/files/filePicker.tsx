/**
 * The file picker of the Save-as-template and Submit dialogs: the home as a
 * tree that lists folders when they are opened, with checkboxes, sizes and
 * file counts, excluded entries greyed out with the reason, the total of the
 * selection against a size limit, and (for templates) an editable list of
 * excluded patterns.
 *
 * A ReactWidget over a `PickerModel` (model.ts; the selection rules are the
 * pure functions of selection.ts).
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import * as React from 'react';
import { CguAPI } from '../api';
import { IFilePickerOptions, PickerModel } from './model';
import { PatternFieldset } from './patterns';
import { ISelectionTotals } from './selection';
import { PickerTree } from './tree';
export type { IFilePickerOptions } from './model';

export class FilePicker extends ReactWidget {
  constructor(options: IFilePickerOptions) {
    super();
    this.model = new PickerModel({
      ...options,
      fetch: options.fetch ?? CguAPI.files
    });
    this.model.changed.connect(this._onChange, this);
    this.model.focusRequested.connect(this._focusPatternInput, this);
    this.addClass('cgu-Picker');
    this.node.dataset.cgu = 'file-picker';
    // Render now: the dialogs place this node in their forms themselves.
    this.onUpdateRequest(Widget.Msg.UpdateRequest);
    this.ready = this.model.start();
  }

  /** The picker's state. */
  readonly model: PickerModel;

  /** Resolves once the home and the folders of the initial paths are listed. */
  readonly ready: Promise<void>;

  /** Emitted when the selection, the patterns or the limit change. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The paths to send: the selection without excluded entries. */
  get paths(): string[] {
    return this.model.paths;
  }

  /** The excluded patterns to send (templates). */
  get patterns(): string[] {
    return this.model.patterns;
  }

  /** The size of the selection. */
  get totals(): ISelectionTotals {
    return this.model.totals;
  }

  /** Whether the selection is over the limit. */
  get overLimit(): boolean {
    return this.model.overLimit;
  }

  /** Change the limit (the Submit dialog, when another assignment is chosen). */
  setLimit(maxBytes: number | null, what: string): void {
    this.model.setLimit(maxBytes, what);
  }

  /**
   * Handle Enter inside the picker before the dialog does: in the pattern box
   * it adds the pattern, on a checkbox it toggles it (instead of accepting
   * the whole dialog).
   */
  handleDialogKeydown(event: KeyboardEvent): boolean {
    const target = event.target;
    if (
      event.key !== 'Enter' ||
      !(target instanceof HTMLInputElement) ||
      !this.node.contains(target)
    ) {
      return false;
    }
    if (target.dataset.cgu === 'picker-pattern-input') {
      this.model.addPattern();
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

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return (
      <>
        <PickerTree model={this.model} />
        {this.model.options.editablePatterns ? (
          <PatternFieldset model={this.model} />
        ) : null}
      </>
    );
  }

  private _onChange(): void {
    this.node.classList.toggle('cgu-mod-over', this.model.warning !== null);
    this._changed.emit();
  }

  private _focusPatternInput(): void {
    this.node
      .querySelector<HTMLInputElement>('[data-cgu="picker-pattern-input"]')
      ?.focus();
  }

  private _changed = new Signal<this, void>(this);
}
