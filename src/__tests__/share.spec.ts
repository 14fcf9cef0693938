/**
 * The Share dialog without a browser: the combobox's keys, the sentence after
 * sharing, the model's search / pick / share / revoke against an in-memory
 * directory and share store, and what the grantee search renders (roles,
 * aria-activedescendant) through React's server renderer.
 */
import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { comboboxKey, suggestionsHint } from '../share/combobox';
import { shareOutcome } from '../share/format';
import { SEARCH_DEBOUNCE_MS, ShareModel } from '../share/model';
import { IShareAPI } from '../share/types';
import { WhoPart } from '../share/who';
import { IDirectory, IShare, IShareRequest } from '../apiTypes';
import { trans } from './trans';

describe('comboboxKey', () => {
  it('moves round the list with the arrows', () => {
    expect(comboboxKey('ArrowDown', 3, 0)).toEqual({ kind: 'move', active: 1 });
    expect(comboboxKey('ArrowDown', 3, 2)).toEqual({ kind: 'move', active: 0 });
    expect(comboboxKey('ArrowUp', 3, 0)).toEqual({ kind: 'move', active: 2 });
    expect(comboboxKey('ArrowUp', 3, -1)).toEqual({ kind: 'move', active: 1 });
  });

  it('closes on Escape and picks the active (or only) one on Enter', () => {
    expect(comboboxKey('Escape', 2, 1)).toEqual({ kind: 'close' });
    expect(comboboxKey('Enter', 2, 1)).toEqual({ kind: 'pick', index: 1 });
    expect(comboboxKey('Enter', 1, -1)).toEqual({ kind: 'pick', index: 0 });
    expect(comboboxKey('Enter', 2, -1)).toBeNull();
  });

  it('leaves other keys, and every key of an empty list, alone', () => {
    expect(comboboxKey('a', 2, 0)).toBeNull();
    expect(comboboxKey('Tab', 2, 0)).toBeNull();
    expect(comboboxKey('ArrowDown', 0, -1)).toBeNull();
    expect(comboboxKey('Enter', 0, -1)).toBeNull();
  });

  it('says how to use the list', () => {
    expect(suggestionsHint(1, trans)).toBe(
      '1 suggestion: arrow keys to move, Enter to pick.'
    );
    expect(suggestionsHint(3, trans)).toMatch(/^3 suggestions/);
    expect(suggestionsHint(0, trans)).toMatch(/^Type at least 2 letters/);
  });
});

describe('shareOutcome', () => {
  const done = [
    {
      grantee: { kind: 'user' as const, name: 'bob', display_name: 'Bob' },
      expires_at: null
    },
    {
      grantee: { kind: 'group' as const, name: 'a', display_name: 'Class A' },
      expires_at: null
    }
  ];

  it('names everyone it was shared with', () => {
    expect(shareOutcome('hw.ipynb', 'read', done, [], 0, trans)).toEqual({
      text: 'Shared hw.ipynb with Bob, Class A (read-only, no end). Send them the link.',
      kind: 'info'
    });
  });

  it('adds what failed, as an error', () => {
    const outcome = shareOutcome(
      '',
      'edit',
      done.slice(0, 1),
      ['Eve: no such user'],
      0,
      trans
    );
    expect(outcome.kind).toBe('error');
    expect(outcome.text).toContain('the whole notebook with Bob (can edit');
    expect(outcome.text).toContain('Eve: no such user');
    expect(shareOutcome('', 'read', [], ['x: 1', 'y: 2'], 0, trans)).toEqual({
      text: 'x: 1 y: 2',
      kind: 'error'
    });
  });
});

/** An in-memory directory and share store with the endpoints' shape. */
class Store implements IShareAPI {
  directoryAnswer: IDirectory = {
    users: [
      { name: 'me', display_name: 'Me', role: 'student' },
      { name: 'bob', display_name: 'Bob Lee', role: 'ta' },
      { name: 'bea', display_name: 'Bea', role: 'student' }
    ],
    groups: [{ name: 'class-a', display_name: 'Class A' }]
  };
  queries: string[] = [];
  requests: IShareRequest[] = [];
  list: IShare[] = [];
  refuse = new Set<string>();
  refuseDelete = false;

  async shares(): Promise<IShare[]> {
    return [...this.list];
  }
  async createShare(body: IShareRequest): Promise<IShare> {
    this.requests.push(body);
    if (this.refuse.has(body.grantee)) {
      throw new Error(`${body.grantee} cannot be given access`);
    }
    const share: IShare = {
      id: this.list.length + 1,
      grantee: {
        kind: body.kind,
        name: body.grantee,
        display_name: body.grantee.toUpperCase()
      },
      access: body.access,
      path: body.path ?? '',
      expires_at: null,
      created_at: '2026-01-01T00:00:00Z',
      url: `/s/${this.list.length + 1}`
    };
    this.list.push(share);
    return share;
  }
  async deleteShare(id: number): Promise<{ message: string }> {
    if (this.refuseDelete) {
      throw new Error('not yours');
    }
    this.list = this.list.filter(s => s.id !== id);
    return { message: 'ok' };
  }
  async directory(query: string): Promise<IDirectory> {
    this.queries.push(query);
    return this.directoryAnswer;
  }
}

function model(
  store: Store,
  mode: 'choose' | 'file' | 'notebook' = 'choose'
): ShareModel {
  return new ShareModel({
    mode,
    filePath: 'hw.ipynb',
    notebookName: 'lab',
    selfName: 'me',
    defaultAccess: 'read',
    defaultExpiry: '1h',
    origin: 'http://bob--lab.localhost:8000',
    api: store,
    copy: async () => true,
    trans
  });
}

describe('ShareModel', () => {
  afterEach(() => jest.useRealTimers());

  it('asks the directory once typing pauses, from 2 letters on', async () => {
    jest.useFakeTimers();
    const store = new Store();
    const m = model(store);
    m.setQuery('b');
    m.setQuery('be');
    jest.advanceTimersByTime(SEARCH_DEBOUNCE_MS - 1);
    expect(store.queries).toEqual([]);
    jest.advanceTimersByTime(1);
    await Promise.resolve();
    await Promise.resolve();
    expect(store.queries).toEqual(['be']);
    // Never the user themself; those starting with the query first.
    expect(m.suggestions.map(s => s.name)).toEqual(['bea', 'bob', 'class-a']);
    expect(m.isOpen).toBe(true);
    expect(m.active).toBe(0);
    m.dispose();
  });

  it('keeps the newest answer only', async () => {
    const store = new Store();
    const m = model(store);
    let release: () => void = () => undefined;
    const slow = new Promise<void>(resolve => (release = resolve));
    const api = store.directory.bind(store);
    store.directory = async (q: string) => {
      if (q === 'bo') {
        await slow;
      }
      return api(q);
    };
    const first = m.search('bo');
    await m.search('be');
    expect(m.suggestions.map(s => s.name)).toEqual(['bea', 'bob', 'class-a']);
    release();
    await first;
    expect(m.suggestions.map(s => s.name)).toEqual(['bea', 'bob', 'class-a']);
  });

  it('says when nobody matches', async () => {
    const store = new Store();
    store.directoryAnswer = { users: [], groups: [] };
    const m = model(store);
    await m.search('zz');
    expect(m.isOpen).toBe(false);
    expect(m.hint).toBe('Nobody matches "zz".');
  });

  it('takes the list keys in the search box and picks with Enter', async () => {
    const store = new Store();
    const m = model(store);
    let focused = 0;
    m.focusRequested.connect(() => (focused += 1));
    await m.search('b');
    expect(m.key('ArrowDown', 'search')).toBe(true);
    expect(m.active).toBe(1);
    expect(m.key('ArrowUp', 'search')).toBe(true);
    expect(m.key('ArrowUp', 'search')).toBe(true);
    expect(m.active).toBe(m.suggestions.length - 1);
    expect(m.key('Escape', 'search')).toBe(true);
    expect(m.isOpen).toBe(false);
    // With the list closed, Escape is the dialog's again.
    expect(m.key('Escape', 'search')).toBe(false);
    await m.search('b');
    expect(m.key('Enter', 'search')).toBe(true);
    expect(m.picked.map(p => p.name)).toEqual(['bob']);
    expect(m.query).toBe('');
    expect(m.isOpen).toBe(false);
    expect(focused).toBe(1);
    // A picked grantee is not suggested again.
    await m.search('b');
    expect(m.suggestions.map(s => s.name)).not.toContain('bob');
  });

  it('asks for a grantee before Enter shares', () => {
    const m = model(new Store());
    expect(m.canShare).toBe(false);
    expect(m.key('Enter', 'field')).toBe(true);
    expect(m.status).toEqual({
      text: 'Choose a person or a group first: type 2 letters of a name.',
      kind: 'error'
    });
    expect(m.key('Enter', 'other')).toBe(false);
    expect(m.key('a', 'field')).toBe(false);
  });

  it('shares the chosen file with each grantee and keeps the ones that failed', async () => {
    const store = new Store();
    store.refuse.add('class-a');
    const m = model(store);
    await m.search('b');
    m.pick(m.suggestions[0]);
    await m.search('cl');
    m.pick(m.suggestions[0]);
    m.setAccess('edit');
    m.setExpiry('30m');
    await m.share();
    expect(store.requests).toEqual([
      {
        grantee: 'bob',
        kind: 'user',
        access: 'edit',
        expires_in_minutes: 30,
        path: 'hw.ipynb'
      },
      {
        grantee: 'class-a',
        kind: 'group',
        access: 'edit',
        expires_in_minutes: 30,
        path: 'hw.ipynb'
      }
    ]);
    expect(m.picked.map(p => p.name)).toEqual(['class-a']);
    expect(m.link).toBe('http://bob--lab.localhost:8000/s/1');
    expect(m.status?.kind).toBe('error');
    expect(m.status?.text).toContain('Class A: class-a cannot be given access');
    expect(m.shares?.map(s => s.id)).toEqual([1]);
  });

  it('shares the whole server when chosen, and refuses an unknown expiry', async () => {
    const store = new Store();
    const m = model(store);
    expect(m.scope).toBe('file');
    m.setScope('notebook');
    await m.search('bo');
    m.pick(m.suggestions[0]);
    m.setExpiry('forever');
    await m.share();
    expect(store.requests).toEqual([]);
    expect(m.status).toEqual({
      text: 'Unknown expiry choice "forever".',
      kind: 'error'
    });
    m.setExpiry('none');
    await m.share();
    expect(store.requests).toEqual([
      { grantee: 'bob', kind: 'user', access: 'read', expires_in_minutes: null }
    ]);
    expect(model(store, 'notebook').scope).toBe('notebook');
  });

  it('revokes, and keeps the share listed when the server refuses', async () => {
    const store = new Store();
    const m = model(store);
    await m.search('bo');
    m.pick(m.suggestions[0]);
    await m.share();
    const share = (m.shares ?? [])[0];
    store.refuseDelete = true;
    await m.revoke(share, 'BOB');
    expect(m.status).toEqual({ text: 'not yours', kind: 'error' });
    expect(m.isRevoking(share)).toBe(false);
    expect(m.shares).toHaveLength(1);
    store.refuseDelete = false;
    await m.revoke(share, 'BOB');
    expect(m.status).toEqual({
      text: 'Revoked the share with BOB.',
      kind: 'info'
    });
    expect(m.shares).toEqual([]);
  });

  it('says whether a link was copied', async () => {
    const m = model(new Store());
    await m.copy('http://x/s/1');
    expect(m.status).toEqual({ text: 'Link copied.', kind: 'info' });
    const refused = new ShareModel({ ...m.options, copy: async () => false });
    await refused.copy('http://x/s/1');
    expect(refused.status?.kind).toBe('error');
    expect(refused.status?.text).toContain('http://x/s/1');
  });
});

describe('WhoPart', () => {
  it('renders an ARIA combobox that names its active option', async () => {
    const m = model(new Store());
    await m.search('b');
    m.key('ArrowDown', 'search');
    const html = renderToStaticMarkup(
      React.createElement(WhoPart, { model: m })
    );
    const doc = html.replace(/&quot;/g, '"');
    const input =
      /<input[^>]*data-cgu="share-search"[^>]*>/.exec(doc)?.[0] ?? '';
    expect(input).toContain('role="combobox"');
    expect(input).toContain('aria-expanded="true"');
    expect(input).toContain('aria-autocomplete="list"');
    const listId = /aria-controls="([^"]+)"/.exec(input)?.[1];
    const active = /aria-activedescendant="([^"]+)"/.exec(input)?.[1];
    expect(doc).toContain(`<ul id="${listId}" role="listbox"`);
    expect(active).toBe(`${listId}-1`);
    const options = doc.match(/<li [^>]*role="option"[^>]*>/g) ?? [];
    expect(options).toHaveLength(m.suggestions.length);
    expect(options[1]).toContain(`id="${active}"`);
    expect(options[1]).toContain('aria-selected="true"');
    expect(options[0]).toContain('aria-selected="false"');
    expect(options[1]).toContain('data-grantee="user:bea"');
  });

  it('hides the list and the chips when there is nothing to show', () => {
    const html = renderToStaticMarkup(
      React.createElement(WhoPart, { model: model(new Store()) })
    );
    expect(html).toMatch(/data-cgu="share-grantees" hidden=""/);
    expect(html).toMatch(/data-cgu="share-suggestions" hidden=""/);
    expect(html).toContain('aria-expanded="false"');
    expect(html).not.toContain('aria-activedescendant');
  });
});
