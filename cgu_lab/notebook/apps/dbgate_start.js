// DbGate (the npm distribution, as its own dbgate-serve starts it), on a unix socket.
// Written by cgu-lab (notebook/apps/database_client.py starts it): DbGate listens on a TCP
// port of every interface; here every listen() of its HTTP server goes to the socket in
// the notebook's private apps folder (the first argument; its path in the command line lets
// the server's apps find and stop this process), which only its user can open.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const socketPath = process.argv[2];
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  const done = args.find(arg => typeof arg === 'function');
  try {
    fs.unlinkSync(socketPath);
  } catch (error) {
    // none yet
  }
  return listen.call(this, socketPath, () => {
    fs.chmodSync(socketPath, 0o600);
    if (done) done();
  });
};

// DbGate's own SIGTERM handler waits for its HTTP connections to end; a stopping notebook
// does not wait for a browser tab, so the process ends at most two seconds later.
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 2000).unref());

global.API_PACKAGE = path.dirname(path.dirname(require.resolve('dbgate-api')));
global.PLUGINS_DIR = path.dirname(global.API_PACKAGE);
global.IS_NPM_DIST = true;

// DbGate's page asks at start for the cloud's public files and premium offer, from
// api.dbgate.cloud: a notebook's database client never calls out (database_client.py
// hides the cloud's widgets), so the refresh answers at once, as it does when nothing
// changed.
const cloud = require('dbgate-api/src/controllers/cloud');
cloud.refreshPublicFiles = async () => ({ status: 'ok' });

require('dbgate-api').getMainModule().start();
