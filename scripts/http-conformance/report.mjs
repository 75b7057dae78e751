// Markdown for docs/http-conformance.md from a cache-tests results file: passes per suite beside
// the shipped results of other caches, then every test not passed with its kind and the suite's
// message. Scores the way score.mjs does (cache-tests.fyi's rules, dependencies honoured).
//   node report.mjs RESULTS.json [--browser]
// Reads the suite from ../shared/http-conformance by path (never copied into this repository).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const ct = path.resolve(here, '../../../shared/http-conformance/cache-tests')
const { default: suites } = await import(pathToFileURL(path.join(ct, 'tests/index.mjs')))
const { determineTestResult, resultTypes } = await import(pathToFileURL(path.join(ct, 'test-engine/lib/results.mjs')))
const { default: shipped } = await import(pathToFileURL(path.join(ct, 'results/index.mjs')))

const args = process.argv.slice(2)
const file = args.find(a => !a.startsWith('--'))
const browser = args.includes('--browser')
const included = test => browser ? !(test.cdn_only || test.browser_skip) : !test.browser_only

function perSuite (results) {
  const counts = {}
  let total = 0
  for (const suite of suites) {
    const c = (counts[suite.id] = { pass: 0, of: 0 })
    for (const test of suite.tests) {
      if (!included(test) || (test.kind ?? 'required') === 'check') continue
      c.of++
      if (determineTestResult(suites, test.id, results) === resultTypes.pass) { c.pass++; total++ }
    }
  }
  return { counts, total }
}

const columns = [['this run', perSuite(JSON.parse(fs.readFileSync(file, 'utf8')))]]
for (const impl of shipped) {
  if (browser !== (impl.type === 'browser')) continue
  const r = JSON.parse(fs.readFileSync(path.join(ct, 'results', impl.file), 'utf8'))
  columns.push([impl.name, perSuite(r)])
}
console.log(`| suite | tests | ${columns.map(c => c[0]).join(' | ')} |`)
console.log(`|---|---:|${columns.map(() => '---:').join('|')}|`)
for (const suite of suites) {
  const of = columns[0][1].counts[suite.id].of
  if (of === 0) continue
  console.log(`| ${suite.name} (\`${suite.id}\`) | ${of} | ${columns.map(c => c[1].counts[suite.id].pass).join(' | ')} |`)
}
console.log(`| **all** | | ${columns.map(c => `**${c[1].total}**`).join(' | ')} |`)

console.log('\n| test | kind | result | message |')
console.log('|---|---|---|---|')
const results = JSON.parse(fs.readFileSync(file, 'utf8'))
const names = new Map(Object.entries(resultTypes).map(([k, v]) => [v, k]))
for (const suite of suites) {
  for (const test of suite.tests) {
    const kind = test.kind ?? 'required'
    if (!included(test) || kind === 'check') continue
    const r = determineTestResult(suites, test.id, results)
    if (r === resultTypes.pass) continue
    const detail = String((results[test.id] && results[test.id][1]) || '').replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 120)
    const deps = test.depends_on ? ` (depends on ${test.depends_on.join(', ')})` : ''
    console.log(`| \`${test.id}\` | ${kind} | ${names.get(r)}${r === resultTypes.dependency_fail ? deps : ''} | ${detail} |`)
  }
}
