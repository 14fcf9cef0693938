import {
  appPageUrl,
  AppKind,
  DATABASE_KINDS,
  desktopSocketUrl,
  IApp,
  iconShape,
  openCommandId
} from '../apps/protocol';

const desktop: IApp = {
  name: 'desktop',
  title: 'Linux desktop',
  kind: 'desktop',
  icon: '',
  path: 'desktop/',
  view_path: 'cgu-lab/apps/desktop/view',
  interactive: true
};

describe('where apps open', () => {
  it('drives the desktop through the proxy, or watches it through the view-only channel', () => {
    const ws = 'ws://alice--nb.localhost:8000/notebook/alice/nb/';
    expect(desktopSocketUrl(ws, desktop)).toBe(`${ws}desktop/`);
    expect(desktopSocketUrl(ws, { ...desktop, interactive: false })).toBe(
      `${ws}cgu-lab/apps/desktop/view`
    );
  });

  it('opens a web app under the base URL, with one command per app', () => {
    const vscode: IApp = {
      ...desktop,
      name: 'vscode',
      kind: 'vscode',
      path: 'vscode/',
      view_path: null
    };
    expect(appPageUrl('http://h/base/', vscode)).toBe('http://h/base/vscode/');
    expect(openCommandId('vscode')).toBe('cgu-lab:apps-open-vscode');
  });
});

describe('the launcher card of each kind', () => {
  it("draws both database engines with the extension's database icon", () => {
    const databases: AppKind[] = ['postgres', 'mariadb'];
    expect(databases.map(iconShape)).toEqual(['database', 'database']);
    expect([...DATABASE_KINDS].sort()).toEqual(['mariadb', 'postgres']);
  });

  it('keeps the desktop and VS Code their own, and every other app the generic one', () => {
    expect(iconShape('desktop')).toBe('desktop');
    expect(iconShape('vscode')).toBe('code');
    const others: AppKind[] = ['browser', 'rstudio', 'web'];
    expect(others.map(iconShape)).toEqual(['web', 'web', 'web']);
    expect(iconShape('a-kind-of-a-newer-server')).toBe('web');
  });
});
