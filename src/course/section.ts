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
import type { IAssignment, IBroadcast } from '../apiTypes';
import {
  agoText,
  broadcastLabel,
  ICourseDeployment,
  ICourseSection
} from './format';

/** What the buttons and links of a section do. */
export interface ICourseSectionActions {
  openPath: (path: string) => void;
  submit: (assignmentId: number) => void;
  /** "Copy to my home" of a live view (no button without it). */
  copyBroadcast?: (group: string, broadcast: IBroadcast) => void;
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
  const headingId = uniqueId('cgu-course-group');
  const deployments = renderDeployments(section, now, actions);
  const broadcasts = renderBroadcasts(section, now, actions);
  const assignments = renderAssignments(section, now, actions);
  return h(
    'section',
    {
      class: 'cgu-Course-group',
      'data-cgu': 'course-group',
      'data-group': group.name,
      'aria-labelledby': headingId
    },
    renderGroupHeader(section, headingId, actions),
    h('h4', { class: 'cgu-Course-subheading' }, trans.__('Material')),
    deployments,
    ...broadcasts,
    h('h4', { class: 'cgu-Course-subheading' }, trans.__('Assignments')),
    assignments
  );
}

/** The group's title, its "new" badge and its "Folder" button. */
function renderGroupHeader(
  section: ICourseSection,
  headingId: string,
  actions: ICourseSectionActions
): HTMLElement {
  const trans = actions.trans;
  const group = section.group;
  const title = group.display_name || group.name;
  return h(
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
  );
}

/** The "Material" list, or a note that there is none. */
function renderDeployments(
  section: ICourseSection,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  if (!section.deployments.length) {
    return h(
      'p',
      { class: 'cgu-Course-none' },
      actions.trans.__('No material yet.')
    );
  }
  return h(
    'ul',
    { class: 'cgu-Course-items' },
    ...section.deployments.map(d => renderDeployment(d, now, actions))
  );
}

function renderDeployment(
  d: ICourseDeployment,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  const trans = actions.trans;
  return h(
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
  );
}

/** The "Live now" heading and list, or nothing when no one broadcasts. */
function renderBroadcasts(
  section: ICourseSection,
  now: number,
  actions: ICourseSectionActions
): HTMLElement[] {
  if (!section.broadcasts.length) {
    return [];
  }
  return [
    h('h4', { class: 'cgu-Course-subheading' }, actions.trans.__('Live now')),
    h(
      'ul',
      { class: 'cgu-Course-items' },
      ...section.broadcasts.map(b =>
        renderBroadcast(section.group.name, b, now, actions)
      )
    )
  ];
}

function renderBroadcast(
  group: string,
  b: IBroadcast,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  const trans = actions.trans;
  const label = broadcastLabel(b, trans);
  const copy = actions.copyBroadcast;
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
      ),
      copy
        ? h(
            'button',
            {
              type: 'button',
              class: 'jp-mod-styled cgu-Course-copy',
              'data-cgu': 'course-broadcast-copy',
              title: trans.__(
                'Copy this notebook into your home, to keep and run it after the live view ends'
              ),
              onclick: () => copy(group, b)
            },
            trans.__('Copy to my home')
          )
        : null
    ),
    h(
      'div',
      { class: 'cgu-Course-meta' },
      countdownText(b.expires_at, now, trans)
    )
  );
}

/** The "Assignments" list, or a note that there is none. */
function renderAssignments(
  section: ICourseSection,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  if (!section.assignments.length) {
    return h(
      'p',
      { class: 'cgu-Course-none' },
      actions.trans.__('No assignment.')
    );
  }
  return h(
    'ul',
    { class: 'cgu-Course-items' },
    ...section.assignments.map(a => renderAssignment(a, now, actions))
  );
}

function renderAssignment(
  a: IAssignment,
  now: number,
  actions: ICourseSectionActions
): HTMLElement {
  const trans = actions.trans;
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
      h('span', { class: 'cgu-Course-name', title: a.description || '' }, name),
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
}
