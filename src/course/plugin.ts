/**
 * `cgu-lab:course` — the left-sidebar Course panel: material, live
 * broadcasts, assignments.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { registerCommand } from '../commands';
import { CoursePanel } from './panel';
import { courseIcon } from '../icons';
import { intervalSeconds } from '../format';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';

/** The Course panel (owner): material, live broadcasts, assignments. */
export const coursePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:course',
  description:
    'Lists the material, live notebooks and assignments of my course groups.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ICommandPalette, ILayoutRestorer, ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const prefs: ICoursePrefs = { notify: true };
    const panel = createCoursePanel(app, trans, prefs);
    addCoursePanel(app, panel, trans, restorer);
    registerCourseCommands(app, panel, trans, palette);
    if (settingRegistry) {
      loadCourseSettings(settingRegistry, panel, prefs);
    }
    void app.restored.then(() => panel.start());
  }
};

/** What the settings change after the panel is made. */
interface ICoursePrefs {
  notify: boolean;
}

/** The panel, wired to the commands and to the "new material" notification. */
function createCoursePanel(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  prefs: ICoursePrefs
): CoursePanel {
  const { commands, shell } = app;
  let hintId = '';
  const panel = new CoursePanel({
    trans,
    openPath: path => {
      const command = commands.hasCommand('filebrowser:open-path')
        ? 'filebrowser:open-path'
        : 'docmanager:open';
      void commands.execute(command, { path });
    },
    submit: assignmentId =>
      void commands.execute(CommandIDs.submit, { assignmentId }),
    onNewMaterial: hint => {
      if (!prefs.notify) {
        return;
      }
      if (hintId) {
        Notification.dismiss(hintId);
      }
      hintId = Notification.info(hint, {
        autoClose: 8000,
        actions: [
          {
            label: trans.__('Open Course'),
            caption: trans.__('Show the Course panel'),
            callback: () => shell.activateById(panel.id)
          }
        ]
      });
    },
    onShow: () => {
      if (hintId) {
        Notification.dismiss(hintId);
        hintId = '';
      }
    }
  });
  return panel;
}

function addCoursePanel(
  app: JupyterFrontEnd,
  panel: CoursePanel,
  trans: TranslationBundle,
  restorer: ILayoutRestorer | null
): void {
  panel.id = 'cgu-lab-course';
  panel.title.icon = courseIcon;
  panel.title.caption = trans.__('Course');
  panel.node.setAttribute('aria-label', trans.__('Course'));
  app.shell.add(panel, 'left', { rank: 850 });
  restorer?.add(panel, 'cgu-lab-course');
}

function registerCourseCommands(
  app: JupyterFrontEnd,
  panel: CoursePanel,
  trans: TranslationBundle,
  palette: ICommandPalette | null
): void {
  registerCommand(
    app,
    CommandIDs.openCourse,
    {
      label: trans.__('Open Course Panel'),
      caption: trans.__(
        'Show the material, live notebooks and assignments of your courses'
      ),
      icon: courseIcon,
      execute: () => app.shell.activateById(panel.id)
    },
    { palette }
  );
  registerCommand(
    app,
    CommandIDs.refreshCourse,
    {
      label: trans.__('Refresh Course Panel'),
      caption: trans.__(
        'Load the material and assignments of your courses again'
      ),
      execute: () => panel.refresh()
    },
    { palette }
  );
}

/** Applies `pollInterval` and `notifyNewMaterial`, now and on every change. */
function loadCourseSettings(
  settingRegistry: ISettingRegistry,
  panel: CoursePanel,
  prefs: ICoursePrefs
): void {
  void settingRegistry
    .load(coursePlugin.id)
    .then(settings => {
      const apply = () => {
        panel.interval = intervalSeconds(
          settings.get('pollInterval').composite,
          60,
          10
        );
        prefs.notify = settings.get('notifyNewMaterial').composite !== false;
      };
      apply();
      settings.changed.connect(apply);
    })
    .catch(reason =>
      console.error('cgu-lab: cannot load the course settings', reason)
    );
}
