// Babel turns JupyterLab's ES modules into what jest runs (jest.config.js).
module.exports = require('@jupyterlab/testutils/lib/babel.config');
