import { ServerConnection } from '@jupyterlab/services';
import {
  handshake,
  missingExtensionMessage,
  normalizeRelease,
  sameRelease,
  sessionFromHandshake,
  versionMismatchMessage
} from '../core/handshake';
import { LAB_EXTENSION_VERSION } from '../version';
import { messageFromBody } from '../api';
import { IServerInfo } from '../tokens';
import { trans } from './trans';

const MISSING_EXTENSION_MESSAGE = missingExtensionMessage(trans);

const info: IServerInfo = {
  version: '0.1.0',
  user: { name: 'alice', display_name: 'Alice' },
  notebook: { owner: 'alice', name: 'nb1' },
  access: 'owner',
  controller_url: '/'
};

describe('handshake', () => {
  it('passes the server info through', async () => {
    await expect(handshake(trans, async () => info)).resolves.toEqual({
      ok: true,
      info
    });
  });

  it('turns a 404 into an actionable message', async () => {
    const response = new Response('not found', { status: 404 });
    const failing = async (): Promise<IServerInfo> => {
      throw new ServerConnection.ResponseError(response, 'Not Found');
    };
    await expect(handshake(trans, failing)).resolves.toEqual({
      ok: false,
      message: MISSING_EXTENSION_MESSAGE
    });
  });

  it('refuses a server extension of another release, and says to reload', async () => {
    const older = { ...info, version: '0.0.9' };
    const result = await handshake(trans, async () => older, '0.1.0');
    expect(result).toEqual({
      ok: false,
      reload: true,
      message: versionMismatchMessage(trans, '0.1.0', '0.0.9')
    });
    expect(result.ok ? '' : result.message).toBe(
      'cgu-lab is being updated: this page has version 0.1.0 but the notebook server runs version 0.0.9. Reload the page to use the new version; until then the cgu-lab features are off in this tab. If this stays after a reload, restart the notebook from the portal.'
    );
    // No feature acts: the session has no info, as without a server extension.
    expect(sessionFromHandshake(result)).toEqual({
      info: null,
      access: null,
      isOwner: false,
      problem: result.ok ? null : result.message
    });
  });

  it('refuses a server that does not say its release', async () => {
    const silent = { ...info, version: undefined } as unknown as IServerInfo;
    const result = await handshake(trans, async () => silent, '0.1.0');
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toContain('runs version unknown');
  });

  it('compares this build with the server by release', async () => {
    const same = { ...info, version: LAB_EXTENSION_VERSION };
    await expect(handshake(trans, async () => same)).resolves.toEqual({
      ok: true,
      info: same
    });
  });

  it("reads package.json's and Python's spellings of a release as one", () => {
    expect(sameRelease('1.2.0-alpha.1', '1.2.0a1')).toBe(true);
    expect(sameRelease('1.2.0-beta.2', '1.2.0b2')).toBe(true);
    expect(sameRelease('1.2.0-rc.1', '1.2.0rc1')).toBe(true);
    expect(sameRelease('0.1.0', '0.1.0')).toBe(true);
    expect(sameRelease('0.1.0', '0.1.1')).toBe(false);
    expect(sameRelease('1.2.0-alpha.1', '1.2.0a2')).toBe(false);
    expect(normalizeRelease('v0.1.0-dev.3')).toBe('0.1.0.dev3');
  });

  it('keeps other errors readable', async () => {
    const failing = async (): Promise<IServerInfo> => {
      throw new Error('network is down');
    };
    await expect(handshake(trans, failing)).resolves.toEqual({
      ok: false,
      message: 'network is down'
    });
  });
});

describe('messageFromBody', () => {
  it('reads the message field', () => {
    expect(messageFromBody({ message: 'quota exceeded' }, 'x')).toBe(
      'quota exceeded'
    );
  });
  it('falls back for other bodies', () => {
    expect(messageFromBody('oops', '500 Internal')).toBe('500 Internal');
    expect(messageFromBody({ message: '' }, 'fallback')).toBe('fallback');
  });
});

describe('sessionFromHandshake', () => {
  it('marks the owner', () => {
    expect(sessionFromHandshake({ ok: true, info })).toEqual({
      info,
      access: 'owner',
      isOwner: true,
      problem: null
    });
  });

  it('keeps a shared user from owner-only features', () => {
    const shared: IServerInfo = {
      ...info,
      access: 'read',
      scope: ['hw1.ipynb']
    };
    expect(sessionFromHandshake({ ok: true, info: shared })).toMatchObject({
      access: 'read',
      isOwner: false
    });
  });

  it('carries the problem when the server extension did not answer', () => {
    expect(
      sessionFromHandshake({ ok: false, message: MISSING_EXTENSION_MESSAGE })
    ).toEqual({
      info: null,
      access: null,
      isOwner: false,
      problem: MISSING_EXTENSION_MESSAGE
    });
  });
});
