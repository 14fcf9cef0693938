/**
 * One group's section of the Course panel: its material (with a "new"
 * badge), the notebooks shown live to the class and the assignments with
 * their deadlines, submission counts and "Submit…" buttons.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { h, uniqueId } from '../dom';
import { absoluteShareUrl, countdownText } from '../format';
import {
  deadlineState,
  deadlineText,
  submissionCountText
} from '../submit/format';
import { agoText, broadcastLabel, ICourseSection } from './format';

/** What the buttons and links of a section do. */
export interface ICourseSectionActions {
  openPath: (path: string) => void;
  submit: (assignmentId: number) => void;
  origin: string;
  trans: TranslationBundle;
}

/** Renders one section of the Course panel. */
export function renderCourseSection(
  section: ICourseSection,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  const trans = actions.trans;
  const group = section.group;
  const title = group.display_name || group.name;
  const headingId = uniqueId('cgu-course-group');
  const deployments = section.deployments.length
    ? h(
        'ul',
        { class: 'cgu-Course-items' },
        ...section.deployments.map(d =>
          h(
            'li',
            {
              class: 'cgu-Course-item',
              'data-cgu': 'course-deployment',
              'data-deployment-id': d.id,
              'data-path': d.path,
              'data-new': d.isNew ? 'true' : 'false'
            },
            h(
              'div',
              { class: 'cgu-Course-line' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'cgu-Course-link',
                  title: trans.__('Open %1', d.path),
                  'data-cgu': 'course-deployment-open',
                  onclick: () => actions.openPath(d.path)
                },
                d.title || d.path
              ),
              d.isNew
                ? h(
                    'span',
                    {
                      class: 'cgu-Badge cgu-Badge-new',
                      'data-cgu': 'course-new-badge'
                    },
                    trans.__('new')
                  )
                : null
            ),
            h(
              'div',
              { class: 'cgu-Course-meta' },
              h(
                'span',
                { title: new Date(d.at).toLocaleString() },
                agoText(d.at, now, trans)
              ),
              d.by ? trans.__(' · by %1', d.by) : ''
            )
          )
        )
      )
    : h('p', { class: 'cgu-Course-none' }, trans.__('No material yet.'));

  const broadcasts = section.broadcasts.length
    ? [
        h('h4', { class: 'cgu-Course-subheading' }, trans.__('Live now')),
        h(
          'ul',
          { class: 'cgu-Course-items' },
          ...section.broadcasts.map(b => {
            const label = broadcastLabel(b, trans);
            return h(
              'li',
              {
                class: 'cgu-Course-item cgu-Course-broadcast',
                'data-cgu': 'course-broadcast',
                'data-owner': b.owner
              },
              h(
                'div',
                { class: 'cgu-Course-line' },
                h(
                  'span',
                  { class: 'cgu-Course-live' },
                  h('span', { class: 'cgu-LiveDot', 'aria-hidden': 'true' }),
                  trans.__('%1 — %2', label, b.notebook)
                ),
                h(
                  'a',
                  {
                    class: 'cgu-Course-open',
                    href: absoluteShareUrl(b.url, actions.origin),
                    target: '_blank',
                    rel: 'noopener noreferrer',
                    'data-cgu': 'course-broadcast-open',
                    'aria-label': trans.__('Open %1 (opens a new tab)', label)
                  },
                  trans.__('Open')
                )
              ),
              h(
                'div',
                { class: 'cgu-Course-meta' },
                countdownText(b.expires_at, now, trans)
              )
            );
          })
        )
      ]
    : [];

  const assignments = section.assignments.length
    ? h(
        'ul',
        { class: 'cgu-Course-items' },
        ...section.assignments.map(a => {
          const state = deadlineState(a, now);
          const name = a.title || a.name;
          return h(
            'li',
            {
              class: `cgu-Course-item cgu-Deadline-${state}`,
              'data-cgu': 'course-assignment',
              'data-assignment-id': a.id,
              'data-state': state
            },
            h(
              'div',
              { class: 'cgu-Course-line' },
              h(
                'span',
                { class: 'cgu-Course-name', title: a.description || '' },
                name
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'jp-Button jp-mod-styled cgu-Course-submit',
                  'data-cgu': 'course-submit',
                  'aria-label': trans.__('Submit to %1…', name),
                  title: a.open ? '' : trans.__('This assignment is closed.'),
                  disabled: !a.open,
                  onclick: () => actions.submit(a.id)
                },
                trans.__('Submit…')
              )
            ),
            h(
              'div',
              { class: 'cgu-Course-meta' },
              h(
                'span',
                {
                  class: 'cgu-Course-deadline',
                  'data-cgu': 'course-deadline',
                  title: a.deadline ? new Date(a.deadline).toLocaleString() : ''
                },
                deadlineText(a, now, trans)
              ),
              ' · ',
              h(
                'span',
                { 'data-cgu': 'course-submissions' },
                submissionCountText(a.submissions, trans)
              )
            )
          );
        })
      )
    : h('p', { class: 'cgu-Course-none' }, trans.__('No assignment.'));

  return h(
    'section',
    {
      class: 'cgu-Course-group',
      'data-cgu': 'course-group',
      'data-group': group.name,
      'aria-labelledby': headingId
    },
    h(
      'div',
      { class: 'cgu-Course-groupHeader' },
      h('h3', { id: headingId, class: 'cgu-Course-groupTitle' }, title),
      section.newCount > 0
        ? h(
            'span',
            {
              class: 'cgu-Badge cgu-Badge-new',
              'data-cgu': 'course-group-new'
            },
            trans.__('%1 new', section.newCount)
          )
        : null,
      group.folder
        ? h(
            'button',
            {
              type: 'button',
              class: 'jp-Button jp-mod-styled cgu-Course-folder',
              'data-cgu': 'course-open-folder',
              title: trans.__('Show %1 in the file browser', group.folder),
              'aria-label': trans.__('Open the folder of %1', title),
              onclick: () => actions.openPath(group.folder)
            },
            trans.__('Folder')
          )
        : null
    ),
    h('h4', { class: 'cgu-Course-subheading' }, trans.__('Material')),
    deployments,
    ...broadcasts,
    h('h4', { class: 'cgu-Course-subheading' }, trans.__('Assignments')),
    assignments
  );
}
