// The official openai npm client (pinned in tools/reference/package.json) against `edgemm serve`,
// as an application would use it: chat (greedy ids as `edgemm vqa`'s), streaming, embeddings in
// float and base64, and errors as the client's typed exceptions. Run by serve_cli_test.sh.
// Usage: node serve_openai_client.js REPO_ROOT BASE_URL API_KEY IMAGE VQA_JSON EMBEDDINGS_JSON
const fs = require('fs');
const path = require('path');
const {createRequire} = require('module');
const [root, base, key, image, vqaJson, embeddingsJson] = process.argv.slice(2);
const OpenAI = createRequire(path.join(root, 'tools/reference/package.json'))('openai');
const assert = require('assert');

const client = new OpenAI({baseURL: base + '/v1', apiKey: key, maxRetries: 0});
const url = 'data:image/png;base64,' + fs.readFileSync(image).toString('base64');
const messages =
    [{role: 'user', content: [{type: 'image_url', image_url: {url}}, {type: 'text', text: 'What is in this image?'}]}];
const vqa = JSON.parse(fs.readFileSync(vqaJson, 'utf8'));

async function main() {
  const models = await client.models.list();
  assert.deepStrictEqual(models.data.map((m) => m.id), ['ocr', 'clip', 'vlm']);

  const chat = await client.chat.completions.create({model: 'vlm', messages, temperature: 0, max_tokens: 12});
  assert.deepStrictEqual(chat.edgemm.ids, vqa.ids);
  assert.strictEqual(chat.choices[0].message.content, vqa.answer);
  assert.strictEqual(chat.usage.completion_tokens, vqa.ids.length);

  const stream =
      await client.chat.completions.create({model: 'vlm', messages, temperature: 0, max_tokens: 12, stream: true});
  let text = '';
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.choices.length && chunk.choices[0].delta.content) text += chunk.choices[0].delta.content;
    if (chunk.choices.length && chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.strictEqual(text, vqa.answer);
  assert.strictEqual(finish, chat.choices[0].finish_reason);

  const want = JSON.parse(fs.readFileSync(embeddingsJson, 'utf8')).data[0].embedding;
  const floats = await client.embeddings.create({model: 'clip', input: 'a photo of a cat', encoding_format: 'float'});
  assert.deepStrictEqual(floats.data[0].embedding, want);
  // Without encoding_format the client asks for base64 and decodes it to numbers itself.
  const decoded = await client.embeddings.create({model: 'clip', input: 'a photo of a cat'});
  const f32 = (v) => Math.fround(v);
  assert.deepStrictEqual(decoded.data[0].embedding.map(f32), want.map(f32));

  await assert.rejects(
      client.chat.completions.create({model: 'gpt-4o', messages}),
      (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  await assert.rejects(
      client.chat.completions.create({model: 'vlm', messages: []}),
      (e) => e instanceof OpenAI.BadRequestError && /messages/.test(e.message));
  const stranger = new OpenAI({baseURL: base + '/v1', apiKey: 'wrong', maxRetries: 0});
  await assert.rejects(stranger.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
  console.log('openai client: chat, stream, embeddings (float, base64), errors: ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
