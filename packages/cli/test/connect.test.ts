// How the CLI finds its store, without a server: URL schemes, SQLite paths, a backend package
// that is not installed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError, EXIT } from '@cairn/cli';
import { importBackend } from '../src/connect/backend.js';
import { sqlitePath } from '../src/connect/backends/sqlite.js';
import { openUrl } from '../src/connect/open-url.js';

describe('connecting', () => {
  it('a backend package that is not installed: a usage error naming what to install', async () => {
    const error = await importBackend({ title: 'Example', packages: '@cairn/example example-driver' }, () => import('cairn-no-such-package-' + 'x')).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof CliError, String(error));
    assert.equal(error.exitCode, EXIT.usage);
    assert.match(error.message, /^The Example backend is not installed: npm i @cairn\/example example-driver/);
  });

  it('any other failure of the import is passed on as it is', async () => {
    const boom = new Error('boom');
    await assert.rejects(
      importBackend({ title: 'Example', packages: 'x' }, () => Promise.reject(boom)),
      (e) => e === boom,
    );
  });

  it('sqlite: URLs name a relative, an absolute or a file-URL path', () => {
    assert.equal(sqlitePath('sqlite:app.sqlite'), 'app.sqlite');
    assert.equal(sqlitePath('sqlite:./data/app.sqlite'), './data/app.sqlite');
    assert.equal(sqlitePath('sqlite:/var/lib/app.sqlite'), '/var/lib/app.sqlite');
    assert.equal(sqlitePath('sqlite:///var/lib/my%20app.sqlite'), '/var/lib/my app.sqlite');
  });

  it('an unknown scheme or a MongoDB URL without a database: usage errors before anything is opened', async () => {
    for (const [url, message] of [
      ['ftp://host/x', /unknown scheme/],
      ['no-scheme-at-all', /unknown scheme/],
      ['mongodb://127.0.0.1:1', /names no database/],
    ] as const) {
      await assert.rejects(openUrl(url, {}), (e: unknown) => e instanceof CliError && e.exitCode === EXIT.usage && message.test(e.message));
    }
  });
});
