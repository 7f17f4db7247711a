#!/usr/bin/env node
// Rebuilds t/search/catalogue.json: the MCP tools of a real Claude Code request
// (t/fixtures/claude-code/ts-unset/002.json) plus the tool lists of MCP servers
// published on npm, listed by starting each server over stdio and asking it
// (initialize, notifications/initialized, tools/list).
//
// Provenance only: CI does not run this (it needs the npm registry).
//
//   node t/search/build_catalogue.js            # install into build/mcpcat, list, write catalogue.json
//   node t/search/build_catalogue.js --no-install   # reuse build/mcpcat/pkgs/*
//
// No server needs a real account to list its tools: dummy tokens are set
// where a server refuses to start without one; nothing is called.
// Notes per server are in t/search/README.md.
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const HERE = __dirname;
const REPO = path.resolve(HERE, '..', '..');
const WORK = process.env.MCPCAT_DIR || path.join(REPO, 'build', 'mcpcat');
const PKGS = path.join(WORK, 'pkgs');
const FAKE_HOME = path.join(WORK, 'home');
const FIXTURE = path.join(REPO, 't/fixtures/claude-code/ts-unset/002.json');
const OUT = path.join(HERE, 'catalogue.json');
// the stub Redis listens on a free loopback port, known once it listens
let redisPort = 0;

const bin = (dir, name) => path.join(PKGS, dir, 'node_modules/.bin', name);
const mod = (dir, pkg, file) => path.join(PKGS, dir, 'node_modules', pkg, file);

// server: the name used in mcp__<server>__<tool>
const SERVERS = [
  { server: 'slack', pkg: '@modelcontextprotocol/server-slack', version: '2025.4.25',
    cmd: () => [bin('slack', 'mcp-server-slack')], env: { SLACK_BOT_TOKEN: 'xoxb-fake', SLACK_TEAM_ID: 'T00000000' } },
  // Left alone, npm resolves zod 4 for this 2025 package and zod-to-json-schema
  // then emits empty input schemas: zod is held at the 3.x its SDK uses.
  { server: 'gitlab', pkg: '@modelcontextprotocol/server-gitlab', version: '2025.4.25', overrides: { zod: '3.25.76' },
    cmd: () => [bin('gitlab', 'mcp-server-gitlab')], env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-fake' } },
  { server: 'google-maps', pkg: '@modelcontextprotocol/server-google-maps', version: '0.6.2',
    cmd: () => [bin('google-maps', 'mcp-server-google-maps')], env: { GOOGLE_MAPS_API_KEY: 'fake' } },
  { server: 'brave-search', pkg: '@modelcontextprotocol/server-brave-search', version: '0.6.2',
    cmd: () => [bin('brave-search', 'mcp-server-brave-search')], env: { BRAVE_API_KEY: 'fake' } },
  { server: 'sequential-thinking', pkg: '@modelcontextprotocol/server-sequential-thinking', version: '2026.8.31',
    cmd: () => [bin('sequential-thinking', 'mcp-server-sequential-thinking')] },
  // The browser download is skipped: tools/list does not launch Chrome.
  { server: 'puppeteer', pkg: '@modelcontextprotocol/server-puppeteer', version: '2025.5.12',
    installEnv: { PUPPETEER_SKIP_DOWNLOAD: '1', PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: '1' },
    cmd: () => [bin('puppeteer', 'mcp-server-puppeteer')] },
  // Connects to Redis before serving: a stub RESP listener on loopback answers +OK.
  { server: 'redis', pkg: '@modelcontextprotocol/server-redis', version: '2025.4.25', fakeRedis: true,
    cmd: () => [bin('redis', 'mcp-server-redis'), `redis://127.0.0.1:${redisPort}`] },
  { server: 'notion', pkg: '@notionhq/notion-mcp-server', version: '2.5.2',
    cmd: () => [bin('notion', 'notion-mcp-server')], env: { NOTION_TOKEN: 'ntn_fake' } },
  { server: 'sentry', pkg: '@sentry/mcp-server', version: '0.36.0',
    cmd: () => [bin('sentry', 'sentry-mcp'), '--access-token=fake'] },
  { server: 'context7', pkg: '@upstash/context7-mcp', version: '4.1.1',
    cmd: () => [bin('context7', 'context7-mcp')] },
  { server: 'kubernetes', pkg: 'mcp-server-kubernetes', version: '4.1.7',
    cmd: () => [bin('kubernetes', 'mcp-server-kubernetes')] },
  // Default feature groups minus "docs": search_docs needs the Content API at
  // tools/list time (network), so it is left out.
  { server: 'supabase', pkg: '@supabase/mcp-server-supabase', version: '0.13.0',
    cmd: () => [bin('supabase', 'mcp-server-supabase'), '--features=account,database,debugging,development,functions,branching'],
    env: { SUPABASE_ACCESS_TOKEN: 'sbp_fake' } },
  // keytar (a dependency) builds against libsecret: apt-get install libsecret-1-dev first.
  { server: 'azure-devops', pkg: '@azure-devops/mcp', version: '2.10.0',
    cmd: () => [bin('azure-devops', 'mcp-server-azuredevops'), 'fakeorg'] },
  { server: 'circleci', pkg: '@circleci/mcp-server-circleci', version: '0.20.0',
    cmd: () => [bin('circleci', 'mcp-server-circleci')], env: { CIRCLECI_TOKEN: 'fake' } },
  { server: 'mongodb', pkg: 'mongodb-mcp-server', version: '3.0.4',
    cmd: () => [bin('mongodb', 'mongodb-mcp-server')] },
  { server: 'jira', pkg: '@aashari/mcp-server-atlassian-jira', version: '3.3.0',
    cmd: () => [bin('jira', 'mcp-atlassian-jira')],
    env: { ATLASSIAN_SITE_NAME: 'example', ATLASSIAN_USER_EMAIL: 'a@example.com', ATLASSIAN_API_TOKEN: 'fake' } },
  { server: 'linear', pkg: 'linear-mcp', version: '1.2.0',
    cmd: () => ['node', mod('linear', 'linear-mcp', 'build/index.js')], env: { LINEAR_API_KEY: 'lin_api_fake' } },
  // Google servers want an OAuth client file (and gmail a token file) at startup:
  // fake ones are written under a throw-away HOME.
  { server: 'google-calendar', pkg: '@cocal/google-calendar-mcp', version: '2.6.3', fakeGoogle: true,
    cmd: () => [bin('google-calendar', 'google-calendar-mcp')],
    env: { GOOGLE_OAUTH_CREDENTIALS: path.join(FAKE_HOME, 'gcp-oauth.keys.json'),
           GOOGLE_CALENDAR_MCP_TOKEN_PATH: path.join(FAKE_HOME, 'gcal-tokens.json') } },
  { server: 'gmail', pkg: '@gongrzhe/server-gmail-autoauth-mcp', version: '1.1.11', fakeGoogle: true,
    cmd: () => [bin('gmail', 'gmail-mcp')] },
  { server: 'tavily', pkg: 'tavily-mcp', version: '0.2.22',
    cmd: () => [bin('tavily', 'tavily-mcp')], env: { TAVILY_API_KEY: 'tvly-fake' } },
  { server: 'firecrawl', pkg: 'firecrawl-mcp', version: '3.22.2',
    cmd: () => [bin('firecrawl', 'firecrawl-mcp')], env: { FIRECRAWL_API_KEY: 'fc-fake' } },
  { server: 'datadog', pkg: '@winor30/mcp-server-datadog', version: '1.8.0',
    cmd: () => [bin('datadog', 'mcp-server-datadog')], env: { DATADOG_API_KEY: 'fake', DATADOG_APP_KEY: 'fake' } },
  { server: 'airtable', pkg: 'airtable-mcp-server', version: '1.14.0',
    cmd: () => [bin('airtable', 'airtable-mcp-server')], env: { AIRTABLE_API_KEY: 'patfake' } },
];

function install(s) {
  const prefix = path.join(PKGS, s.server);
  fs.mkdirSync(prefix, { recursive: true });
  if (s.overrides) {
    const pj = path.join(prefix, 'package.json');
    const p = fs.existsSync(pj) ? JSON.parse(fs.readFileSync(pj, 'utf8')) : {};
    p.overrides = s.overrides;
    fs.writeFileSync(pj, JSON.stringify(p, null, 2) + '\n');
  }
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', prefix, `${s.pkg}@${s.version}`],
    { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300000, env: { ...process.env, ...(s.installEnv || {}) } });
}

function fakeGoogleFiles() {
  const keys = JSON.stringify({ installed: { client_id: 'fake.apps.googleusercontent.com', client_secret: 'fake', redirect_uris: ['http://localhost'] } });
  fs.mkdirSync(path.join(FAKE_HOME, '.gmail-mcp'), { recursive: true });
  fs.writeFileSync(path.join(FAKE_HOME, 'gcp-oauth.keys.json'), keys);
  fs.writeFileSync(path.join(FAKE_HOME, '.gmail-mcp/gcp-oauth.keys.json'), keys);
  fs.writeFileSync(path.join(FAKE_HOME, '.gmail-mcp/credentials.json'),
    JSON.stringify({ access_token: 'fake', refresh_token: 'fake', token_type: 'Bearer', expiry_date: 9999999999999 }));
}

function fakeRedis() {
  return new Promise(res => {
    const srv = net.createServer(sock => sock.on('data', d => {
      const n = (d.toString().match(/^\*/gm) || ['x']).length;
      for (let i = 0; i < n; i++) sock.write('+OK\r\n');
    }));
    srv.listen(0, '127.0.0.1', () => { redisPort = srv.address().port; res(srv); });
  });
}

// Start one server, list its tools, kill its whole process group. Bounded by timeoutMs.
function listTools(argv, env, timeoutMs = 30000) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env, detached: true, cwd: WORK });
    let buf = '', stderr = '', nextId = 1, done = false;
    const pending = {};
    const finish = (err, val) => {
      if (done) return; done = true;
      clearTimeout(timer);
      try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone */ }
      err ? reject(new Error(err + '\n' + stderr.slice(-2000))) : resolve(val);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    child.on('error', e => finish('spawn: ' + e.message));
    child.on('exit', c => finish('server exited ' + c));
    child.stderr.on('data', d => { stderr += d; });
    child.stdout.on('data', d => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).trim(); buf = buf.slice(i + 1);
        let msg; try { msg = JSON.parse(line); } catch (e) { continue; }
        if (msg.id !== undefined && pending[msg.id]) { const cb = pending[msg.id]; delete pending[msg.id]; cb(msg); }
      }
    });
    const req = (method, params) => new Promise(res => {
      const id = nextId++; pending[id] = res;
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
    (async () => {
      const init = await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcpcat', version: '0.1' } });
      if (init.error) return finish('initialize: ' + JSON.stringify(init.error));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      const tools = [];
      let cursor;
      do {
        const r = await req('tools/list', cursor ? { cursor } : {});
        if (r.error) return finish('tools/list: ' + JSON.stringify(r.error));
        tools.push(...r.result.tools);
        cursor = r.result.nextCursor;
      } while (cursor);
      finish(null, { serverInfo: init.result.serverInfo, tools });
    })().catch(e => finish(String(e)));
  });
}

async function main() {
  const noInstall = process.argv.includes('--no-install');
  fs.mkdirSync(PKGS, { recursive: true });
  fakeGoogleFiles();
  const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
  const catalogue = fixture.tools.filter(t => t.name.startsWith('mcp__'))
    .map(t => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
  const names = new Set(catalogue.map(t => t.name));
  console.error(`fixture: ${catalogue.length} mcp__ tools`);
  for (const s of SERVERS) {
    try {
      if (!noInstall) install(s);
      const env = { ...process.env, ...(s.env || {}) };
      if (s.fakeGoogle) env.HOME = FAKE_HOME;
      const redis = s.fakeRedis ? await fakeRedis() : null;
      let res;
      try { res = await listTools(s.cmd(), env); } finally { if (redis) redis.close(); }
      let added = 0;
      for (const t of res.tools) {
        const name = `mcp__${s.server}__${t.name}`;
        if (names.has(name)) continue;
        names.add(name);
        catalogue.push({ name, description: t.description || '', input_schema: t.inputSchema || { type: 'object', properties: {} } });
        added++;
      }
      console.error(`${s.server}: ${added} tools (${s.pkg}@${s.version})`);
    } catch (e) {
      console.error(`${s.server}: FAILED ${e.message}`);
    }
  }
  fs.writeFileSync(OUT, JSON.stringify(catalogue, null, 1) + '\n');
  console.error(`wrote ${OUT}: ${catalogue.length} tools`);
}

main().then(() => process.exit(0));
