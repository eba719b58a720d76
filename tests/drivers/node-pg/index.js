// Closed-loop load through node-postgres (`pg` on npm) in its DEFAULT mode, or with `--named`, for lockscope's
// driver tests.
//
// What `pg` sends by default (lib/query.js requiresPreparation): a query with parameter values goes through the
// extended protocol as the UNNAMED statement every time (Parse/Bind/Describe/Execute/Sync with text parameters of
// unspecified type), so the server plans every execution and keeps no statement; a query without values goes
// through the simple protocol. `pg` never prepares on its own. With `--named` the query config gets
// `name: 'lockscope_load'`: the first execution on a connection Parses that NAMED statement, `pg` remembers it per
// connection (connection.parsedStatements) and every later execution is Bind/Execute of it, which the server's plan
// cache plans custom for its executions 1-5 and generic from the 6th.
//
// Usage: node index.js [--named] HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]
//   HOST is a Unix socket directory or an address; no password. SQL uses $1..$n (pg's own syntax). TYPE is int (a JS
//   number) or text (a string). The loop runs SECONDS, or less if standard input ends first (its end-of-file stops
//   the load). Prints one JSON line: {"driver","version","calls","errors","seconds"}.
'use strict'

const { Client } = require('pg')
const { version } = require('pg/package.json')

function fail(message) {
  console.error(`node-pg-load: ${message}`)
  process.exit(2)
}

function parseParam(p) {
  const [kind, ...rest] = p.split(':')
  const value = rest.join(':')
  if (kind === 'int' && rest.length && /^-?\d+$/.test(value)) return Number(value)
  if (kind === 'text' && rest.length) return value
  fail(`parameter ${p} is not int:N or text:S`)
}

async function main() {
  const argv = process.argv.slice(2)
  const named = argv[0] === '--named'
  if (named) argv.shift()
  if (argv.length < 7) fail('usage: node index.js [--named] HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]')
  const [host, port, user, database, clients, seconds, text, ...raw] = argv
  const query = { text, values: raw.map(parseParam) }
  if (named) query.name = 'lockscope_load'

  const conns = []
  for (let i = 0; i < Number(clients); i++) {
    const client = new Client({ host, port: Number(port), user, database })
    await client.connect()
    conns.push(client)
  }

  let calls = 0
  let errors = 0
  let stop = false
  process.stdin.on('data', () => {})
  process.stdin.on('end', () => { stop = true })
  process.stdin.on('error', () => { stop = true })
  const start = process.hrtime.bigint()
  const deadline = start + BigInt(Math.round(Number(seconds) * 1e9))
  await Promise.all(
    conns.map(async (client) => {
      while (process.hrtime.bigint() < deadline && !stop) {
        try {
          await client.query(query)
          calls++
        } catch (err) {
          if (errors++ === 0) console.error(`node-pg-load: first error: ${err.message}`)
        }
      }
    })
  )
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9
  await Promise.all(conns.map((client) => client.end()))
  process.stdin.destroy() // a standard input still open would keep the process alive
  const driver = named ? 'node-pg-named' : 'node-pg'
  console.log(JSON.stringify({ driver, version, calls, errors, seconds: elapsed }))
}

main().catch((err) => fail(err.stack || String(err)))
