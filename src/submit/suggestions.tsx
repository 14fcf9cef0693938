/**
 * The list under "Preselected for you" in the Submit dialog: each suggestion
 * (preselect.ts), its size and why, and the total of those the picker still
 * includes.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import { PickerModel } from '../files/model';
import { isCovered } from '../files/selection';
import { formatBytes } from '../format';
import { useModel } from '../useModel';
import type { ISuggestion } from './notebookReads';

function why(suggestion: ISuggestion, trans: TranslationBundle): string {
  switch (suggestion.why) {
    case 'notebook':
      return trans.__('this notebook');
    case 'reads':
      return trans.__('read by the notebook');
    default:
      return trans.__('came with the template');
  }
}

export function SuggestionList(props: {
  suggestions: ReadonlyArray<ISuggestion>;
  picker: PickerModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { suggestions, picker, trans } = props;
  useModel(picker);
  const selected = picker.paths;
  let total = 0;
  let count = 0;
  const rows = suggestions.map(s => {
    const included = isCovered(s.path, selected);
    if (included) {
      total += s.size;
      count += 1;
    }
    return (
      <li
        key={s.path}
        className={`cgu-Suggestions-item${included ? '' : ' cgu-mod-left-out'}`}
        data-cgu="submit-suggestion"
        data-path={s.path}
        data-included={included ? 'true' : 'false'}
      >
        <code className="cgu-Suggestions-path">
          {s.type === 'directory' ? `${s.path}/` : s.path}
        </code>
        <span
          className="cgu-Suggestions-size"
          data-cgu="submit-suggestion-size"
        >
          {formatBytes(s.size)}
        </span>
        <span className="cgu-Suggestions-why">
          {included ? why(s, trans) : trans.__('left out')}
        </span>
      </li>
    );
  });
  return (
    <div className="cgu-Suggestions" data-cgu="submit-suggestions">
      <div className="cgu-Picker-label">{trans.__('Preselected for you')}</div>
      {rows.length ? (
        <ul className="cgu-Suggestions-list">{rows}</ul>
      ) : (
        <p className="cgu-Form-note">{trans.__('Nothing to preselect.')}</p>
      )}
      <div className="cgu-Suggestions-total" data-cgu="submit-suggestion-total">
        {trans._n(
          '%1 preselected item included: %2',
          '%1 preselected items included: %2',
          count,
          formatBytes(total)
        )}
      </div>
    </div>
  );
}
