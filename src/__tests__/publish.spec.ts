import {
  appPath,
  IDemo,
  initialWhat,
  IPublishForm,
  publishBody,
  publishedSummary,
  TITLE_MAX,
  validatePublish
} from '../publish/format';
import { trans } from './trans';

const page: IPublishForm = {
  what: 'voila',
  notebook: 'week 1/Lesson.ipynb',
  port: '',
  app: '',
  course: 'ml101',
  title: ''
};

describe('the Publish form', () => {
  it('offers the open notebook as a page first, else a port', () => {
    expect(initialWhat('a.ipynb')).toBe('voila');
    expect(initialWhat(null)).toBe('port');
  });

  it('lets the server extension name a page, and names a port or an app itself', () => {
    expect(appPath(page)).toBeNull();
    expect(appPath({ ...page, what: 'port', port: ' 8501 ' })).toBe(
      'proxy/8501/'
    );
    expect(appPath({ ...page, what: 'app', app: 'streamlit' })).toBe(
      'streamlit/'
    );
  });

  it('titles a page after its notebook unless told, and publishes to everyone with no course', () => {
    expect(publishBody(page, 'voila-lesson/')).toEqual({
      app: 'voila-lesson/',
      course: 'ml101',
      title: 'Lesson'
    });
    const port = { ...page, what: 'port' as const, port: '80', course: null };
    expect(publishBody({ ...port, title: ' Demo ' }, 'proxy/80/')).toEqual({
      app: 'proxy/80/',
      course: null,
      title: 'Demo'
    });
  });

  it('says what is wrong before anything is sent', () => {
    expect(validatePublish(page, trans)).toBeNull();
    expect(validatePublish({ ...page, notebook: 'notes.py' }, trans)).toMatch(
      /\.ipynb/
    );
    for (const port of ['', '0', '65536', '80a', '-1']) {
      expect(validatePublish({ ...page, what: 'port', port }, trans)).toMatch(
        /1 to 65535/
      );
    }
    expect(
      validatePublish({ ...page, what: 'port', port: '65535' }, trans)
    ).toBeNull();
    expect(validatePublish({ ...page, what: 'app', app: '' }, trans)).toMatch(
      /app/
    );
    const long = 'x'.repeat(TITLE_MAX + 1);
    expect(validatePublish({ ...page, title: long }, trans)).toMatch(
      String(TITLE_MAX)
    );
  });

  it('says where the demo went', () => {
    const demo: IDemo = {
      id: 1,
      app: 'voila-lesson/',
      title: 'Lesson',
      course: 'ml101',
      url: 'http://t--s.localhost/notebook/t/s/voila-lesson/',
      visitors: 0,
      public: false
    };
    expect(publishedSummary(demo, trans)).toBe(
      '"Lesson" is published to ml101.'
    );
    expect(publishedSummary({ ...demo, course: null }, trans)).toMatch(
      /everyone logged in/
    );
  });
});
