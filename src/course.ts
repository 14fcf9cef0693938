/**
 * The Course panel (left sidebar): per group of mine, the material teachers
 * put into my home (with a "new" badge), the notebooks shown live to the
 * class, and the assignments with their deadlines, my submission count and a
 * "Submit…" button. It polls the server, marks material seen while it is
 * shown, and tells the plugin when new material arrives while it is hidden.
 */
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from './api';
import { h, replaceChildren, uniqueId } from './dom';
import { absoluteShareUrl, countdownText, pollDelaySeconds } from './format';
import {
  agoText,
  broadcastLabel,
  courseSections,
  deadlineState,
  deadlineText,
  ICourseSection,
  newArrivals,
  newDeploymentIds,
  newMaterialHint,
  submissionCountText
} from './teaching';
import { ICourses } from './tokens';

/** What the Course panel needs. */
export interface ICoursePanelOptions {
  /** Open a path of the home (a folder in the file browser, a file in its editor). */
  openPath: (path: string) => void;
  /** Open the Submit dialog for an assignment. */
  submit: (assignmentId: number) => void;
  /** Called when new material arrives while the panel is hidden. */
  onNewMaterial?: (hint: string) => void;
  /** Called each time the panel is shown. */
  onShow?: () => void;
  /** Seconds between refreshes (default 60). */
  interval?: number;
  /** The endpoints; replaceable in tests. */
  fetch?: () => Promise<ICourses>;
  markSeen?: () => Promise<unknown>;
  origin?: string;
}

/** The class of the panel's sidebar tab; `cgu-mod-new` adds a dot. */
const TAB_CLASS = 'cgu-CourseTab';

export class CoursePanel extends Widget {
  constructor(options: ICoursePanelOptions) {
    super();
    this._options = options;
    this._fetch = options.fetch ?? CguAPI.courses;
    this._markSeen = options.markSeen ?? CguAPI.coursesSeen;
    this._origin = options.origin ?? window.location.origin;
    this._interval = options.interval ?? 60;
    this.addClass('cgu-Course');
    this.node.dataset.cgu = 'course-panel';
    this.title.className = TAB_CLASS;
    this._list = h('div', {
      class: 'cgu-Course-list',
      role: 'region',
      'aria-label': 'My courses'
    });
    this._status = h('div', {
      class: 'cgu-Course-status',
      role: 'status',
      'aria-live': 'polite',
      'data-cgu': 'course-status'
    });
    replaceChildren(
      this.node,
      h(
        'div',
        { class: 'cgu-Course-header' },
        h('h2', { class: 'cgu-Course-title' }, 'Course'),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled cgu-Course-refresh',
            'data-cgu': 'course-refresh',
            onclick: () => void this.refresh()
          },
          'Refresh'
        )
      ),
      this._status,
      this._list
    );
    this._render();
    document.addEventListener('visibilitychange', this._onVisibility);
  }

  /** Seconds between refreshes (at least 10). */
  get interval(): number {
    return this._interval;
  }
  set interval(seconds: number) {
    this._interval = Math.max(10, Number.isFinite(seconds) ? seconds : 60);
    this._schedule();
  }

  /** Start polling. */
  start(): void {
    void this.refresh();
  }

  /** Load the courses now. */
  async refresh(): Promise<void> {
    window.clearTimeout(this._timer);
    this._timer = 0;
    if (this._inFlight) {
      return this._inFlight;
    }
    this._inFlight = this._refresh().finally(() => {
      this._inFlight = null;
      this._schedule();
    });
    return this._inFlight;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearTimeout(this._timer);
    window.clearInterval(this._clock);
    document.removeEventListener('visibilitychange', this._onVisibility);
    super.dispose();
  }

  /** Shown: refresh (which marks the new material seen) and clear the dot. */
  protected onAfterShow(): void {
    this._setDot(false);
    this._options.onShow?.();
    void this.refresh();
    window.clearInterval(this._clock);
    this._clock = window.setInterval(() => this._render(), 30 * 1000);
  }

  /** Hidden: the badges of this visit go; what is new next time gets them. */
  protected onAfterHide(): void {
    window.clearInterval(this._clock);
    this._remembered.clear();
  }

  private async _refresh(): Promise<void> {
    this._status.textContent = 'Loading…';
    let courses: ICourses;
    try {
      courses = await this._fetch();
    } catch (error) {
      this._failures += 1;
      this._error = errorMessage(error);
      this._status.textContent = '';
      this._render();
      return;
    }
    if (this.isDisposed) {
      return;
    }
    this._failures = 0;
    this._error = null;
    this._courses = courses;
    const newIds = newDeploymentIds(courses);
    const arrivals = newArrivals(courses, this._known);
    this._known = newIds;
    const visible = this.isVisible;
    if (visible) {
      newIds.forEach(id => this._remembered.add(id));
    }
    this._status.textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
    this._render();
    if (newIds.size > 0 && visible) {
      try {
        await this._markSeen();
      } catch (error) {
        console.warn('cgu-lab: could not mark course material seen', error);
      }
    } else if (arrivals.length > 0 && !visible) {
      this._setDot(true);
      const hint = newMaterialHint(arrivals);
      if (hint) {
        this._options.onNewMaterial?.(hint);
      }
    }
  }

  private _schedule(): void {
    window.clearTimeout(this._timer);
    this._timer = 0;
    if (this.isDisposed || document.hidden || this._inFlight) {
      return;
    }
    const delay = pollDelaySeconds(this._interval, this._failures) * 1000;
    this._timer = window.setTimeout(() => void this.refresh(), delay);
  }

  private _onVisibility = (): void => {
    if (document.hidden) {
      window.clearTimeout(this._timer);
      this._timer = 0;
    } else {
      void this.refresh();
    }
  };

  private _setDot(on: boolean): void {
    this.title.className = on ? `${TAB_CLASS} cgu-mod-new` : TAB_CLASS;
  }

  /* ------------------------------------------------------------ rendering */

  private _render(): void {
    if (this._error) {
      replaceChildren(
        this._list,
        h(
          'p',
          {
            class: 'cgu-Course-error',
            role: 'alert',
            'data-cgu': 'course-error'
          },
          this._error
        )
      );
      return;
    }
    if (!this._courses) {
      return;
    }
    const now = Date.now();
    const sections = courseSections(this._courses, now, this._remembered);
    if (sections.length === 0) {
      replaceChildren(
        this._list,
        h(
          'p',
          { class: 'cgu-Course-empty', 'data-cgu': 'course-empty' },
          'You are not in any course group yet.'
        )
      );
      return;
    }
    replaceChildren(
      this._list,
      ...sections.map(section => this._renderSection(section, now))
    );
  }

  private _renderSection(section: ICourseSection, now: number): HTMLElement {
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
                    title: `Open ${d.path}`,
                    'data-cgu': 'course-deployment-open',
                    onclick: () => this._options.openPath(d.path)
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
                      'new'
                    )
                  : null
              ),
              h(
                'div',
                { class: 'cgu-Course-meta' },
                h(
                  'span',
                  { title: new Date(d.at).toLocaleString() },
                  agoText(d.at, now)
                ),
                d.by ? ` · by ${d.by}` : ''
              )
            )
          )
        )
      : h('p', { class: 'cgu-Course-none' }, 'No material yet.');

    const broadcasts = section.broadcasts.length
      ? [
          h('h4', { class: 'cgu-Course-subheading' }, 'Live now'),
          h(
            'ul',
            { class: 'cgu-Course-items' },
            ...section.broadcasts.map(b => {
              const label = broadcastLabel(b);
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
                    `${label} — ${b.notebook}`
                  ),
                  h(
                    'a',
                    {
                      class: 'cgu-Course-open',
                      href: absoluteShareUrl(b.url, this._origin),
                      target: '_blank',
                      rel: 'noopener noreferrer',
                      'data-cgu': 'course-broadcast-open',
                      'aria-label': `Open ${label} (opens a new tab)`
                    },
                    'Open'
                  )
                ),
                h(
                  'div',
                  { class: 'cgu-Course-meta' },
                  countdownText(b.expires_at, now)
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
                    'aria-label': `Submit to ${name}…`,
                    title: a.open ? '' : 'This assignment is closed.',
                    disabled: !a.open,
                    onclick: () => this._options.submit(a.id)
                  },
                  'Submit…'
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
                    title: a.deadline
                      ? new Date(a.deadline).toLocaleString()
                      : ''
                  },
                  deadlineText(a, now)
                ),
                ' · ',
                h(
                  'span',
                  { 'data-cgu': 'course-submissions' },
                  submissionCountText(a.submissions)
                )
              )
            );
          })
        )
      : h('p', { class: 'cgu-Course-none' }, 'No assignment.');

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
              `${section.newCount} new`
            )
          : null,
        group.folder
          ? h(
              'button',
              {
                type: 'button',
                class: 'jp-Button jp-mod-styled cgu-Course-folder',
                'data-cgu': 'course-open-folder',
                title: `Show ${group.folder} in the file browser`,
                'aria-label': `Open the folder of ${title}`,
                onclick: () => this._options.openPath(group.folder)
              },
              'Folder'
            )
          : null
      ),
      h('h4', { class: 'cgu-Course-subheading' }, 'Material'),
      deployments,
      ...broadcasts,
      h('h4', { class: 'cgu-Course-subheading' }, 'Assignments'),
      assignments
    );
  }

  private _options: ICoursePanelOptions;
  private _fetch: () => Promise<ICourses>;
  private _markSeen: () => Promise<unknown>;
  private _origin: string;
  private _interval: number;
  private _courses: ICourses | null = null;
  private _error: string | null = null;
  private _failures = 0;
  private _timer = 0;
  private _clock = 0;
  private _inFlight: Promise<void> | null = null;
  /** Ids the server called new in its latest answer (not yet marked seen). */
  private _known = new Set<number>();
  /** Ids that were new earlier in this visit of the panel. */
  private _remembered = new Set<number>();
  private _list: HTMLElement;
  private _status: HTMLElement;
}
