#pragma once
/// \file commands.h
/// Registration of the `edgemm` subcommands. Each sets `exit_code` when it runs.

#include <CLI/CLI.hpp>

namespace edgemm::cli {

/// `edgemm inspect MODEL`: opsets, inputs/outputs, op histogram, parameters, FLOPs.
void add_inspect_command(CLI::App& app, int& exit_code);
/// `edgemm run MODEL --input name=file.npy ...`: runs a model on .npy inputs.
void add_run_command(CLI::App& app, int& exit_code);
/// `edgemm profile MODEL`: per-node and per-op-type times, FLOPs and bytes over several runs.
void add_profile_command(CLI::App& app, int& exit_code);

/// `edgemm ocr IMAGE...`: PP-OCRv4 text recognition, plain text or --json, --draw.
void add_ocr_command(CLI::App& app, int& exit_code);

/// `edgemm retrieve`: CLIP image index (--index OUT IMAGE...), text search (--index IDX --query
/// TEXT), zero-shot classification (--labels LIST IMAGE...).
void add_retrieve_command(CLI::App& app, int& exit_code);

/// `edgemm eval ocr --set DIR`: CER and detection precision/recall on a labelled set.
void add_eval_command(CLI::App& app, int& exit_code);

/// `edgemm convert MODEL -o OUT`: fixed shapes, simplification, opset conversion, verification.
void add_convert_command(CLI::App& app, int& exit_code);

/// `edgemm quantize MODEL -o OUT --scheme int8|fp16`: post-training quantization (src/quant).
void add_quantize_command(CLI::App& app, int& exit_code);

/// `edgemm prune MODEL -o OUT --tokens-after-layer K --keep-ratio R`: visual token pruning.
void add_prune_command(CLI::App& app, int& exit_code);

/// `edgemm bench MODEL | --pipeline ocr --set DIR`: latency, memory, energy, peers (--compare).
void add_bench_command(CLI::App& app, int& exit_code);

/// `edgemm tokenize --tokenizer PATH TEXT...`: token ids from a Hugging Face tokenizer.json
/// (src/pipelines/text), or text from ids with --decode.
void add_tokenize_command(CLI::App& app, int& exit_code);

/// `edgemm chat-template --template FILE | --model DIR --messages FILE`: a rendered chat prompt
/// (src/pipelines/text/jinja*).
void add_chat_template_command(CLI::App& app, int& exit_code);

/// `edgemm vqa --model DIR IMAGE QUESTION`: generation with a vision-language model package
/// (src/pipelines/vlm).
void add_vqa_command(CLI::App& app, int& exit_code);

/// `edgemm chat --model DIR`: multi-turn chat on stdin, KV cache kept between turns.
void add_chat_command(CLI::App& app, int& exit_code);

/// `edgemm serve --ocr DIR --clip DIR --vlm DIR`: the OpenAI-compatible HTTP server (serve/).
void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace edgemm::cli
