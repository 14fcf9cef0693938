// Generated from package.json by scripts/version-ts.mjs (jlpm build:version); do not edit.

/** The release of this lab extension, fixed when it is built. */
export const LAB_EXTENSION_VERSION = '0.1.0';
