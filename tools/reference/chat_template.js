#!/usr/bin/env node
// Chat-template oracle for edgemm tests: npm @huggingface/jinja 0.5.11 (the renderer of
// transformers.js' apply_chat_template) renders chat templates with the variables
// transformers.js passes.
'use strict';
const fs = require('fs');

const USAGE = `usage: node tools/reference/chat_template.js CASES_JSON
       node tools/reference/chat_template.js --matrix TEMPLATES_JSON CONVERSATIONS_JSON

Renders each case as transformers.js 4.3.1's apply_chat_template(messages, {tokenize: false,
add_generation_prompt, ...extra}) does: new Template(template).render({messages,
add_generation_prompt, tools: null, documents: null, ...special_tokens, ...extra}).

CASES_JSON is a list of {name, template, messages, add_generation_prompt, special_tokens, extra}.
With --matrix, the cases are every template of TEMPLATES_JSON ([{name, template,
special_tokens}]) with every conversation of CONVERSATIONS_JSON ([{name, messages, extra}]),
add_generation_prompt false then true, named "TEMPLATE/CONVERSATION/gen0" and ".../gen1".

Prints one JSON object a case: {"name": ..., "output": TEXT} or {"name": ..., "error": MESSAGE}.
Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

function matrix(templates, conversations) {
  const cases = [];
  for (const t of templates)
    for (const c of conversations)
      for (const gen of [false, true])
        cases.push({name: `${t.name}/${c.name}/gen${gen ? 1 : 0}`, template: t.template, messages: c.messages,
                    add_generation_prompt: gen, special_tokens: t.special_tokens || {}, extra: c.extra || {}});
  return cases;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
  let cases;
  if (args[0] === '--matrix' && args.length === 3) cases = matrix(read(args[1]), read(args[2]));
  else if (args.length === 1) cases = read(args[0]);
  else throw new Error(USAGE);
  const {Template} = await import('@huggingface/jinja');
  const out = [];
  for (const c of cases) {
    try {
      const vars = {messages: c.messages, add_generation_prompt: !!c.add_generation_prompt, tools: null, documents: null,
                    ...(c.special_tokens || {}), ...(c.extra || {})};
      out.push(JSON.stringify({name: c.name, output: new Template(c.template).render(vars)}));
    } catch (e) {
      out.push(JSON.stringify({name: c.name, error: String(e && e.message ? e.message : e)}));
    }
  }
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((e) => {
  console.error(String(e && e.message ? e.message : e));
  process.exit(2);
});
