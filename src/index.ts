/**
 * The cgu-lab lab extension: several small plugins, one per feature.
 *
 * - `cgu-lab:core` — the handshake with the server extension; provides the
 *   session (who is looking, with what access).
 * - `cgu-lab:connection`, `cgu-lab:platform` — tell the user when the
 *   notebook stopped (idle culler, crash, stop) or their share ended, with the
 *   way to go on, instead of "Server Connection Error" (platform/).
 * - `cgu-lab:portal` — "Back to cgu-lab portal" in the File menu and top bar.
 * - `cgu-lab:readonly`, `cgu-lab:cell-executor` — the notice and status-bar
 *   label for users who are not the owner; read-only notebooks start no
 *   kernel and "run cell" says at once why it cannot (readonly/).
 * - `cgu-lab:resources` — status-bar figures, the Resources panel, Resize.
 * - `cgu-lab:share` — the Share dialog (toolbar button, palette, file browser).
 * - `cgu-lab:shared-with-me` — the left-sidebar list of what others shared.
 * - `cgu-lab:culling` — the idle countdown with "Keep running" (culling/).
 * - `cgu-lab:templates` — "Save as template" for teachers (toolbar, palette,
 *   File menu).
 * - `cgu-lab:submit` — "Submit" an assignment, with its receipt; preselects
 *   what the notebook reads and what its template brought.
 * - `cgu-lab:competitions` — "Submit to Competition": a predictions CSV to a
 *   course competition, with its score when scored (competitions/).
 * - `cgu-lab:course` — the left-sidebar Course panel: material, live
 *   broadcasts, assignments.
 * - `cgu-lab:live-view` — for read-only viewers (a broadcast), open documents
 *   reload when the owner saves them.
 * - `cgu-lab:serial` — a serial device of the student's computer (Web Serial)
 *   as a pty and an RFC 2217 port in the notebook (serial/).
 * - `cgu-lab:transfer` — upload folders and archives, download folders and
 *   selections as one streamed zip, with progress, Cancel and resuming
 *   (transfer/).
 * - `cgu-lab:clipboard` — this computer's clipboard for the notebook's kernels
 *   (xclip, xsel, pandas, pyperclip) and "Paste Image/File from Clipboard"
 *   (clipboard/).
 * - `cgu-lab:apps` — the launcher's "Apps": a Linux desktop (noVNC), VS Code,
 *   the environment's own apps, run by jupyter-server-proxy (apps/).
 * - `cgu-lab:publish` — "Publish as a Demo…": the open notebook as a page
 *   (Voilà, run by the notebook from then on), a port or an app, to a course
 *   the owner teaches (publish/).
 * - `cgu-lab:help` — "Ask for help": a course's help queue, the student's
 *   status item (position, who helps, Thanks), the staff's Help queue panel
 *   (Take opens the student's notebook live, Done); `cgu-lab:presence` — who
 *   else is in a notebook shared live (help/).
 *
 * Each feature is a folder with its plugin (`plugin.ts`), its widgets and its
 * pure helpers (`format.ts`); `commands.ts` registers a command with its
 * palette item and the widget of its notebook-toolbar button. Where commands
 * show (File menu, context menus, toolbars) is declared in `schema/*.json`
 * (`jupyter.lab.menus`, `jupyter.lab.toolbars`), never placed in code. Code
 * adds only what has no schema form: palette and launcher items, and the
 * transfer button's drop-down (transfer/commands.ts).
 */
import { appsPlugin } from './apps/plugin';
import { clipboardPlugin } from './clipboard/plugin';
import { competitionsPlugin } from './competitions/plugin';
import { corePlugin } from './core/plugin';
import { coursePlugin } from './course/plugin';
import { cullingPlugin } from './culling/plugin';
import { helpPlugin, presencePlugin } from './help/plugin';
import { liveViewPlugin } from './liveView/plugin';
import {
  connectionPlugin,
  platformPlugin,
  portalPlugin
} from './platform/plugin';
import { publishPlugin } from './publish/plugin';
import { cellExecutorPlugin, readonlyPlugin } from './readonly/plugin';
import { resourcesPlugin } from './resources/plugin';
import { serialPlugin } from './serial/plugin';
import { sharedWithMePlugin, sharePlugin } from './share/plugin';
import { submitPlugin } from './submit/plugin';
import { templatesPlugin } from './templates/plugin';
import { transferPlugin } from './transfer/plugin';

export default [
  corePlugin,
  connectionPlugin,
  platformPlugin,
  portalPlugin,
  cellExecutorPlugin,
  readonlyPlugin,
  resourcesPlugin,
  sharePlugin,
  sharedWithMePlugin,
  cullingPlugin,
  templatesPlugin,
  submitPlugin,
  competitionsPlugin,
  coursePlugin,
  liveViewPlugin,
  serialPlugin,
  transferPlugin,
  clipboardPlugin,
  appsPlugin,
  publishPlugin,
  helpPlugin,
  presencePlugin
];
