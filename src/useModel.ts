/**
 * The extension's React forms keep their state in a plain model (no DOM, so
 * it is unit-tested and a dialog can read it synchronously: the paths to
 * submit, the keys the dialog hands over first), and their components
 * re-render from it. `useSyncExternalStore` makes a change made in an event
 * handler render in that same event, which a controlled input or checkbox
 * needs: a render deferred to the next frame would undo what was typed.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { useCallback, useSyncExternalStore } from 'react';

/** A form's state; `emit()` after every change. */
export abstract class FormModel {
  /** Emitted after every change of the state. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted when the form's main field should take the focus again. */
  get focusRequested(): ISignal<this, void> {
    return this._focusRequested;
  }

  /** Grows with every change: what components compare. */
  get version(): number {
    return this._version;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    Signal.clearData(this);
  }

  protected emit(): void {
    if (this._disposed) {
      return;
    }
    this._version += 1;
    this._changed.emit();
  }

  protected requestFocus(): void {
    this._focusRequested.emit();
  }

  private _changed = new Signal<this, void>(this);
  private _focusRequested = new Signal<this, void>(this);
  private _version = 0;
  private _disposed = false;
}

/** Re-render the calling component whenever `model` changes. */
export function useModel(model: FormModel): void {
  const subscribe = useCallback(
    (notify: () => void) => {
      const slot = (): void => notify();
      model.changed.connect(slot);
      return () => {
        model.changed.disconnect(slot);
      };
    },
    [model]
  );
  useSyncExternalStore(
    subscribe,
    () => model.version,
    () => model.version
  );
}
