// A real OpenID provider for the school-login tests: oidc-provider (a certified
// implementation) on loopback, with discovery, a JWKS whose keys can be rotated, its own
// login page, refresh tokens, and RP-initiated logout.
//
// Configuration comes as JSON in OIDC_TEST_CONFIG: {port, clients: [...], users: {sub: {...}}}.
// Test-only controls (POST, loopback): /_test/rotate (a new signing key first, the old one
// kept), /_test/forge {mode} (the next token response carries a forged ID token: none,
// hs256-public, audience, expired, replay, foreign-key), /_test/disable {sub}.
// Prints "ready <issuer>" once it listens.
import crypto from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG);
const issuer = `http://127.0.0.1:${config.port}`;
const users = config.users;
let keys = [newKey()];
let forgeMode = null;
let lastIdToken = null;

function newKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' };
}

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const unb64 = (part) => JSON.parse(Buffer.from(part, 'base64url').toString());

function rsSign(header, payload, jwk) {
  const input = `${b64(header)}.${b64(payload)}`;
  const key = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
  return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

function forge(idToken, mode) {
  const [h, p] = idToken.split('.');
  const header = unb64(h);
  const payload = unb64(p);
  const now = Math.floor(Date.now() / 1000);
  if (mode === 'none') return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
  if (mode === 'hs256-public') {
    // The classic confusion: an HMAC whose secret is the provider's public key.
    const pem = crypto.createPublicKey({ key: keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: header.kid })}.${b64(payload)}`;
    return `${input}.${crypto.createHmac('sha256', pem).update(input).digest('base64url')}`;
  }
  if (mode === 'audience') return rsSign(header, { ...payload, aud: 'another-application' }, keys[0]);
  if (mode === 'expired') return rsSign(header, { ...payload, iat: now - 7200, exp: now - 3600 }, keys[0]);
  if (mode === 'foreign-key') return rsSign({ ...header, kid: 'not-ours' }, payload, newKey());
  if (mode === 'replay') return lastIdToken ?? idToken;
  throw new Error(`unknown forge mode ${mode}`);
}

function build() {
  const provider = new Provider(issuer, {
    clients: config.clients,
    jwks: { keys },
    cookies: { keys: ['cgu-lab-test-provider'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups']
    },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    async findAccount(ctx, sub) {
      const user = users[sub];
      if (!user || user.disabled) return undefined;
      return {
        accountId: sub,
        async claims() {
          const { password, disabled, ...claims } = user;
          return { sub, ...claims };
        }
      };
    }
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && ctx.status === 200 && ctx.body && ctx.body.id_token) {
      const real = ctx.body.id_token;
      if (forgeMode) {
        ctx.body = { ...ctx.body, id_token: forge(real, forgeMode) };
        forgeMode = null;
      }
      lastIdToken = real;
    }
  });
  return provider;
}

let provider = build();

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(res, uid, error = '') {
  res.writeHead(error ? 401 : 200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html lang="en"><head><title>Test school: sign in</title></head><body>
<h1>Test school</h1><p>Sign in with your school account</p>
${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login">
<label for="login">School user name</label><input id="login" name="login" autocomplete="username">
<label for="password">School password</label><input id="password" name="password" type="password">
<button type="submit">Sign in</button></form></body></html>`);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (action === 'login' && req.method === 'POST') {
    const form = new URLSearchParams(await body(req));
    const sub = Object.keys(users).find((s) => users[s].preferred_username === form.get('login'));
    if (!sub || users[sub].password !== form.get('password') || users[sub].disabled) {
      return loginPage(res, uid, 'Wrong user name or password');
    }
    return provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
  }
  if (details.prompt.name === 'login') return loginPage(res, uid);
  // A first-party client: consent is given without a question, as schools configure it.
  const { prompt, params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

async function control(req, res, what) {
  const input = JSON.parse((await body(req)) || '{}');
  if (what === 'rotate') {
    keys = [newKey(), keys[0]];
    provider = build();
  } else if (what === 'forge') {
    forgeMode = input.mode;
  } else if (what === 'disable') {
    users[input.sub].disabled = true;
  } else {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kid: keys[0].kid }));
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] === '_test' && req.method === 'POST') return await control(req, res, parts[1]);
    if (parts[0] === 'interaction' && parts[1]) return await interaction(req, res, parts[1], parts[2]);
    return provider.callback()(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error.message ?? error));
  }
});
server.listen(config.port, '127.0.0.1', () => console.log(`ready ${issuer}`));
