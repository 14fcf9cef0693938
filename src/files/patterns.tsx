/**
 * The file picker's editable list of excluded patterns (templates): a chip
 * for each pattern with its remove button, and a box to add one. Enter in
 * the box adds the pattern: the dialog hands that key to the picker first.
 */
import { Button } from '@jupyterlab/ui-components';
import * as React from 'react';
import { useModel } from '../useModel';
import { PickerModel } from './model';

/** The chip of an excluded pattern, with its remove button. */
function PatternChip(props: {
  pattern: string;
  model: PickerModel;
}): JSX.Element {
  const { pattern, model } = props;
  const remove = model.trans.__('Remove the pattern %1', pattern);
  return (
    <li className="cgu-Chip" data-cgu="picker-pattern" data-pattern={pattern}>
      <code className="cgu-Chip-label">{pattern}</code>
      <button
        type="button"
        className="cgu-Chip-remove"
        aria-label={remove}
        title={remove}
        data-cgu="picker-pattern-remove"
        onClick={() => model.removePattern(pattern)}
      >
        ×
      </button>
    </li>
  );
}

/** The chips of the excluded patterns, or a note that there is none. */
function PatternList(props: { model: PickerModel }): JSX.Element {
  const { model } = props;
  const trans = model.trans;
  const patterns = model.patterns;
  return (
    <ul
      className="cgu-Picker-patterns"
      aria-label={trans.__('Excluded patterns')}
      data-cgu="picker-patterns"
    >
      {patterns.map(pattern => (
        <PatternChip key={pattern} pattern={pattern} model={model} />
      ))}
      {patterns.length === 0 ? (
        <li className="cgu-Picker-note">
          {trans.__('No pattern: nothing is left out.')}
        </li>
      ) : null}
    </ul>
  );
}

/** The box to add a pattern, and its button. */
function PatternInput(props: {
  model: PickerModel;
  inputId: string;
  noteId: string;
}): JSX.Element {
  const { model, inputId } = props;
  const trans = model.trans;
  return (
    <div className="cgu-Picker-patternRow">
      <label htmlFor={inputId}>{trans.__('Add a pattern')}</label>
      <input
        type="text"
        id={inputId}
        className="jp-mod-styled cgu-Picker-patternInput"
        placeholder={trans.__('e.g. *.ckpt or data/raw')}
        autoComplete="off"
        spellCheck={false}
        aria-describedby={props.noteId}
        data-cgu="picker-pattern-input"
        value={model.draft}
        onChange={event => model.setDraft(event.target.value)}
      />
      <Button
        type="button"
        className="jp-mod-styled cgu-Picker-patternAdd"
        data-cgu="picker-pattern-add"
        onClick={() => model.addPattern()}
      >
        {trans.__('Add')}
      </Button>
    </div>
  );
}

/** The "Excluded patterns" fieldset. */
export function PatternFieldset(props: { model: PickerModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  const inputId = React.useId();
  const noteId = `${inputId}-note`;
  return (
    <fieldset className="cgu-Picker-fieldset">
      <legend>{trans.__('Excluded patterns')}</legend>
      <PatternList model={model} />
      <PatternInput model={model} inputId={inputId} noteId={noteId} />
      <div id={noteId} className="cgu-Picker-note">
        {trans.__(
          'Files and folders matching these patterns are left out (a pattern without "/" matches names anywhere, e.g. *.pyc).'
        )}
      </div>
      <div
        className="cgu-Picker-patternError"
        role="alert"
        data-cgu="picker-pattern-error"
      >
        {model.patternError}
      </div>
    </fieldset>
  );
}
