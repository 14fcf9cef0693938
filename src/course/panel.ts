/**
 * The Course panel (left sidebar): per group of mine, the material teachers
 * put into my home (with a "new" badge), the notebooks shown live to the
 * class, and the assignments with their deadlines, my submission count and a
 * "Submit…" button. It polls the server, marks material seen while it is
 * shown, and tells the plugin when new material arrives while it is hidden.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from '../api';
import { h, replaceChildren } from '../dom';
import { pollFrequency, repaintPoll } from '../polling';
import {
  copiedText,
  courseSections,
  newArrivals,
  newDeploymentIds,
  newMaterialHint
} from './format';
import { renderCourseSection } from './section';
import { IBroadcast, IBroadcastCopied, ICourses } from '../apiTypes';

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
  trans: TranslationBundle;
  /** The endpoints; replaceable in tests. */
  fetch?: () => Promise<ICourses>;
  copyBroadcast?: (group: string, id: number) => Promise<IBroadcastCopied>;
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
    this._copy = options.copyBroadcast ?? CguAPI.copyBroadcast;
    this._origin = options.origin ?? window.location.origin;
    this._interval = options.interval ?? 60;
    this._trans = options.trans;
    const trans = this._trans;
    this._poll = new Poll({
      auto: false,
      factory: () => this._refresh(),
      frequency: pollFrequency(this._interval),
      name: 'cgu-lab:course',
      standby: 'when-hidden'
    });
    // While shown, "5 min ago" and the deadlines move on between answers.
    this._clock = repaintPoll('cgu-lab:course-clock', 30, () => this._render());
    this.addClass('cgu-Course');
    this.node.dataset.cgu = 'course-panel';
    this.title.className = TAB_CLASS;
    this._list = h('div', {
      class: 'cgu-Course-list',
      role: 'region',
      'aria-label': trans.__('My courses')
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
        h('h2', { class: 'cgu-Course-title' }, trans.__('Course')),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled cgu-Course-refresh',
            'data-cgu': 'course-refresh',
            onclick: () => void this.refresh()
          },
          trans.__('Refresh')
        )
      ),
      this._status,
      this._list
    );
    this._render();
  }

  /** Seconds between refreshes (at least 10). */
  get interval(): number {
    return this._interval;
  }
  set interval(seconds: number) {
    this._interval = Math.max(10, Number.isFinite(seconds) ? seconds : 60);
    this._poll.frequency = pollFrequency(this._interval);
  }

  /** Start polling. */
  start(): void {
    void this._poll.start();
  }

  /** Load the courses now; resolves once they arrived (or failed). */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    this._clock.dispose();
    super.dispose();
  }

  /** Shown: refresh (which marks the new material seen) and clear the dot. */
  protected onAfterShow(): void {
    this._setDot(false);
    this._options.onShow?.();
    void this.refresh();
    void this._clock.start();
  }

  /** Hidden: the badges of this visit go; what is new next time gets them. */
  protected onAfterHide(): void {
    void this._clock.stop();
    this._remembered.clear();
  }

  /**
   * "Copy to my home": the live view's notebook into this notebook's home (a live
   * view is read-only and ends; the copy is the student's to run). The status
   * line says what happened and the file browser shows the copy.
   */
  async copyBroadcast(group: string, broadcast: IBroadcast): Promise<void> {
    this._status.textContent = this._trans.__('Copying…');
    try {
      const copied = await this._copy(group, broadcast.id);
      this._status.textContent = copiedText(copied, this._trans);
      this._options.openPath(copied.folder);
    } catch (error) {
      this._status.textContent = errorMessage(error, this._trans);
    }
  }

  /** One answer, shown; rejects (so the poll backs off) when there is none. */
  private async _refresh(): Promise<void> {
    this._status.textContent = this._trans.__('Loading…');
    let courses: ICourses;
    try {
      courses = await this._fetch();
    } catch (error) {
      this._error = errorMessage(error, this._trans);
      this._status.textContent = '';
      this._render();
      throw error;
    }
    if (this.isDisposed) {
      return;
    }
    this._error = null;
    this._courses = courses;
    const newIds = newDeploymentIds(courses);
    const arrivals = newArrivals(courses, this._known);
    this._known = newIds;
    const visible = this.isVisible;
    if (visible) {
      newIds.forEach(id => this._remembered.add(id));
    }
    this._status.textContent = this._trans.__(
      'Updated at %1.',
      new Date().toLocaleTimeString()
    );
    this._render();
    if (newIds.size > 0 && visible) {
      try {
        await this._markSeen();
      } catch (error) {
        console.warn('cgu-lab: could not mark course material seen', error);
      }
    } else if (arrivals.length > 0 && !visible) {
      this._setDot(true);
      const hint = newMaterialHint(arrivals, this._trans);
      if (hint) {
        this._options.onNewMaterial?.(hint);
      }
    }
  }

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
          this._trans.__('You are not in any course group yet.')
        )
      );
      return;
    }
    replaceChildren(
      this._list,
      ...sections.map(section =>
        renderCourseSection(section, now, {
          openPath: path => this._options.openPath(path),
          submit: id => this._options.submit(id),
          copyBroadcast: (group, b) => void this.copyBroadcast(group, b),
          origin: this._origin,
          trans: this._trans
        })
      )
    );
  }

  private _options: ICoursePanelOptions;
  private _fetch: () => Promise<ICourses>;
  private _markSeen: () => Promise<unknown>;
  private _copy: (group: string, id: number) => Promise<IBroadcastCopied>;
  private _origin: string;
  private _interval: number;
  private _trans: TranslationBundle;
  private _poll: Poll;
  private _clock: Poll;
  private _courses: ICourses | null = null;
  private _error: string | null = null;
  /** Ids the server called new in its latest answer (not yet marked seen). */
  private _known = new Set<number>();
  /** Ids that were new earlier in this visit of the panel. */
  private _remembered = new Set<number>();
  private _list: HTMLElement;
  private _status: HTMLElement;
}
