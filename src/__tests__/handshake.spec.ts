import { ServerConnection } from '@jupyterlab/services';
import {
  handshake,
  missingExtensionMessage,
  sessionFromHandshake
} from '../core/handshake';
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
