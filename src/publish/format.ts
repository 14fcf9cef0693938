/**
 * Publishing a demo from JupyterLab, without the DOM: the shapes of the lab
 * routes (`cgu-lab/demos`, answered by the controller; `cgu-lab/apps/voila`, by
 * the server extension) and the rules of the Publish form, which publishes one
 * app of this notebook: the open notebook itself as a page (Voilà, which the
 * notebook then runs and brings back after every restart), a port the notebook
 * serves on, or an app its environment declares.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

/** A course the caller may publish to. */
export interface IPublishCourse {
  name: string;
  display_name: string;
}

/** One published app of this notebook (the controller's `DemoOut`). */
export interface IDemo {
  id: number;
  app: string;
  title: string;
  course: string | null;
  url: string;
  visitors: number;
  public: boolean;
}

/** `GET cgu-lab/demos`: whether the owner may publish, where to, what is published. */
export interface IPublishOptions {
  may_publish: boolean;
  courses: IPublishCourse[];
  demos: IDemo[];
}

/** `POST cgu-lab/apps/voila`: the app that shows the notebook as a page. */
export interface IVoilaPage {
  app: string;
  notebook: string;
}

/** What the form publishes. */
export type PublishWhat = 'voila' | 'port' | 'app';

/** What the Publish form gives. */
export interface IPublishForm {
  what: PublishWhat;
  /** The notebook shown as a page (for `voila`), relative to the home. */
  notebook: string;
  /** The port (for `port`), as typed. */
  port: string;
  /** A declared app's name (for `app`). */
  app: string;
  /** The course whose members may use it; null: everyone logged in. */
  course: string | null;
  title: string;
}

/** The controller's limit on a demo's title (core/publishing.py MAX_TITLE). */
export const TITLE_MAX = 100;

/** The open notebook is offered as a page first; without one, a port. */
export function initialWhat(notebook: string | null): PublishWhat {
  return notebook ? 'voila' : 'port';
}

/** Why the form cannot be sent, or null when it can. */
export function validatePublish(
  form: IPublishForm,
  trans: TranslationBundle
): string | null {
  if (form.what === 'voila' && !form.notebook.trim().endsWith('.ipynb')) {
    return trans.__('Choose a notebook (an .ipynb file) to show as a page.');
  }
  if (form.what === 'port') {
    const port = Number(form.port.trim());
    if (!/^[0-9]+$/.test(form.port.trim()) || port < 1 || port > 65535) {
      return trans.__('A port is a number from 1 to 65535.');
    }
  }
  if (form.what === 'app' && !form.app) {
    return trans.__('Choose an app of this notebook.');
  }
  if (form.title.trim().length > TITLE_MAX) {
    return trans.__('A title has at most %1 characters.', TITLE_MAX);
  }
  return null;
}

/**
 * The app's path to publish, or null for a page: the server extension names
 * that one (`voila-<name>/`) when it makes it.
 */
export function appPath(form: IPublishForm): string | null {
  if (form.what === 'port') {
    return `proxy/${Number(form.port.trim())}/`;
  }
  if (form.what === 'app') {
    return `${form.app}/`;
  }
  return null;
}

/** The body of `POST cgu-lab/demos` once the app's path is known. */
export function publishBody(
  form: IPublishForm,
  app: string
): { app: string; course: string | null; title: string } {
  const title =
    form.title.trim() ||
    (form.what === 'voila'
      ? (form.notebook.split('/').pop() ?? '').replace(/\.ipynb$/, '')
      : '');
  return { app, course: form.course, title };
}

/** What the notification says once published. */
export function publishedSummary(
  demo: IDemo,
  trans: TranslationBundle
): string {
  return demo.course
    ? trans.__('"%1" is published to %2.', demo.title, demo.course)
    : trans.__('"%1" is published to everyone logged in.', demo.title);
}
