/**
 * What the extension's React dialog forms share: a model with the form's
 * problem and busy state, the problem line, the progress line shown while
 * the form is sent, and a labelled field whose note describes its input.
 */
import { ISignal } from '@lumino/signaling';
import * as React from 'react';
import { FormModel } from './useModel';

/** A dialog form's model: its fields (in the subclass), its problem and its busy text. */
export abstract class DialogFormModel extends FormModel {
  /** What is wrong (from validation or the server), or null. */
  get error(): string | null {
    return this._error;
  }

  /** What is under way while the form is sent, or null. */
  get busyText(): string | null {
    return this._busyText;
  }

  setError(message: string | null): void {
    this._error = message;
    this.emit();
  }

  setBusyText(text: string | null): void {
    this._busyText = text;
    this.emit();
  }

  private _error: string | null = null;
  private _busyText: string | null = null;
}

/** Re-render the calling component whenever `signal` is emitted. */
export function useSignal(signal: ISignal<unknown, unknown>): void {
  const [, bump] = React.useReducer((n: number) => n + 1, 0);
  React.useEffect(() => {
    const slot = (): void => bump();
    signal.connect(slot);
    return () => {
      signal.disconnect(slot);
    };
  }, [signal]);
}

/** The form's problem, scrolled into view when it appears. */
export function FormError(props: {
  message: string | null;
  dataCgu: string;
  className?: string;
}): JSX.Element {
  const ref = React.useRef<HTMLDivElement>(null);
  React.useEffect(() => {
    if (props.message) {
      ref.current?.scrollIntoView?.({ block: 'nearest' });
    }
  }, [props.message]);
  return (
    <div
      ref={ref}
      className={props.className ?? 'cgu-Form-error'}
      role="alert"
      data-cgu={props.dataCgu}
      hidden={!props.message}
    >
      {props.message ?? ''}
    </div>
  );
}

/** The progress bar and what is under way, shown while `text` is not null. */
export function FormProgress(props: {
  text: string | null;
  /** The progress bar's accessible name. */
  label: string;
  dataCgu: string;
}): JSX.Element {
  const ref = React.useRef<HTMLDivElement>(null);
  const busy = props.text !== null;
  React.useEffect(() => {
    if (busy) {
      ref.current?.scrollIntoView?.({ block: 'nearest' });
    }
  }, [busy]);
  return (
    <div
      ref={ref}
      className="cgu-Progress"
      data-cgu={props.dataCgu}
      hidden={!busy}
    >
      <progress className="cgu-Progress-bar" aria-label={props.label} />
      <span className="cgu-Form-note">{props.text ?? ''}</span>
    </div>
  );
}

/**
 * A labelled field: `children(id, describedBy)` renders the input with the
 * id the label points at and the id of the note that describes it.
 */
export function Field(props: {
  label: string;
  note?: string | null;
  /** The note's class; `cgu-Form-note` unless told. */
  noteClass?: string;
  noteDataCgu?: string;
  className?: string;
  children: (id: string, describedBy: string | undefined) => React.ReactNode;
}): JSX.Element {
  const id = React.useId();
  const noteId = React.useId();
  const hasNote = props.note !== undefined && props.note !== null;
  return (
    <div className={props.className ?? 'cgu-Form-field'}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id, hasNote ? noteId : undefined)}
      {hasNote ? (
        <span
          id={noteId}
          className={props.noteClass ?? 'cgu-Form-note'}
          data-cgu={props.noteDataCgu}
        >
          {props.note}
        </span>
      ) : null}
    </div>
  );
}

/** The resource amounts the Resize and Save as template forms both edit. */
export type Amount = 'cpus' | 'memoryGiB' | 'gpus';

/** A number input bound to one resource amount of a form's model. */
export function AmountInput(props: {
  model: {
    readonly fields: Readonly<Record<Amount, string>>;
    setField(what: Amount, value: string): void;
  };
  what: Amount;
  dataCgu: string;
  id: string;
  describedBy?: string;
  min: number;
  step: number | 'any';
  disabled?: boolean;
}): JSX.Element {
  const { model, what } = props;
  return (
    <input
      type="number"
      id={props.id}
      className="jp-mod-styled"
      min={props.min}
      step={props.step}
      value={model.fields[what]}
      disabled={props.disabled ?? false}
      aria-describedby={props.describedBy}
      data-cgu={props.dataCgu}
      onChange={event => model.setField(what, event.currentTarget.value)}
    />
  );
}
