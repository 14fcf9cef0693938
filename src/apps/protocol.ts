/**
 * What `GET cgu-lab/apps` answers, and where each app opens: pure helpers
 * without the DOM, tested in src/__tests__.
 */
import { URLExt } from '@jupyterlab/coreutils';

/** The kinds of app the server extension lists (core/apps.py's built-ins, and `web`). */
export type AppKind =
  'desktop' | 'vscode' | 'postgres' | 'mariadb' | 'browser' | 'rstudio' | 'web';

/** The database engines an environment may offer (at most one), by kind. */
export const DATABASE_KINDS: ReadonlySet<AppKind> = new Set<AppKind>([
  'postgres',
  'mariadb'
]);

/** Which of the extension's drawings a kind's launcher card shows: the database kinds
 * share one (an environment offers at most one database, its title names the engine). */
export type IconShape = 'desktop' | 'code' | 'database' | 'web';

export function iconShape(kind: string): IconShape {
  if (kind === 'desktop') {
    return 'desktop';
  }
  if (kind === 'vscode') {
    return 'code';
  }
  return DATABASE_KINDS.has(kind as AppKind) ? 'database' : 'web';
}

/** One app of the notebook, as the server lists it for this caller. */
export interface IApp {
  name: string;
  title: string;
  /** `desktop`, `vscode`, a built-in's name (`postgres`, `mariadb`, `rstudio`;
   * `browser` opens as a window on the desktop), or `web` for an administrator's app. */
  kind: AppKind;
  /** SVG markup for the launcher, or '' for the kind's own icon. */
  icon: string;
  /** Below the server's base URL: the app's own page (or the desktop's socket). */
  path: string;
  /** The desktop's view-only channel (read-only viewers), else null. */
  view_path: string | null;
  /** The owner and editors drive an app; a read-only viewer only watches the desktop. */
  interactive: boolean;
}

export interface IAppList {
  apps: IApp[];
  missing: Record<string, string>;
  interactive: boolean;
}

/** The websocket the desktop panel connects noVNC to: driving or only watching. */
export function desktopSocketUrl(wsUrl: string, app: IApp): string {
  const path = app.interactive ? app.path : (app.view_path ?? app.path);
  return URLExt.join(wsUrl, path);
}

/** The page a web app (VS Code, an admin's app) opens in a browser tab. */
export function appPageUrl(baseUrl: string, app: IApp): string {
  return URLExt.join(baseUrl, app.path);
}

/** How long the browser waits for the desktop it opens on to run (ms), and how often
 * it asks meanwhile: the desktop starts when its tab connects. */
export const BROWSER_WAIT = 20000;
export const BROWSER_RETRY = 500;

/** The command id that opens one app. */
export function openCommandId(name: string): string {
  return `cgu-lab:apps-open-${name}`;
}
