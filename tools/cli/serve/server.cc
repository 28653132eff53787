#include "server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "../cli_common.h"
#include "../output_folder.h"
#include "endpoints.h"
#include "http_json.h"
#include "state.h"

namespace edgemm::cli::serve {

namespace {

namespace fs = std::filesystem;

/// The routes the metrics name; any other path counts as "other" (no label per random URL).
const char* const kRoutes[] = {"/v1/chat/completions", "/v1/embeddings", "/v1/ocr", "/v1/models", "/models", "/health",
                               "/v1/health",           "/metrics",       "/"};

std::string route_label(const std::string& path) {
  for (const char* route : kRoutes) {
    if (path == route) return route;
  }
  return "other";
}

/// Paths answered without the API key and while loading: health checks and the page.
bool is_public(const std::string& path) { return path == "/health" || path == "/v1/health" || path == "/"; }

/// Constant-time comparison, so that the key cannot be guessed byte by byte from timings.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) differ |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return differ == 0;
}

/// True when an Authorization header value is "Bearer KEY" (the scheme's case does not matter,
/// RFC 9110 11.1).
bool has_key(const std::string& authorization, const std::string& key) {
  const std::string scheme = "bearer ";
  if (authorization.size() < scheme.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return false;
  }
  return same_secret(authorization.substr(scheme.size()), key);
}

void print_event(const ServerState& state, const Json& event, const std::string& text) {
  if (state.options.json) {
    std::cout << event.dump() << std::endl;
  } else {
    std::cout << "edgemm serve: " << text << std::endl;
  }
}

std::string folder_name(const std::string& dir) {
  fs::path path = fs::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.filename().string();
}

ServedModel make_slot(const std::string& kind, const std::string& dir, int parallel, int queue) {
  ServedModel model;
  model.kind = kind;
  model.folder = folder_name(dir);
  model.admission = std::make_unique<Admission>(parallel, queue);
  model.runner = std::make_unique<Runner>(parallel);
  return model;
}

/// Loads every package given, printing progress on stderr.
Status load_models(ServerState& state) {
  const ServeOptions& o = state.options;
  auto timed = [](const std::string& kind, const std::string& dir, const auto& load) -> Status {
    std::cerr << "edgemm serve: loading " << kind << " from " << dir << " ..." << std::endl;
    const Clock::time_point start = Clock::now();
    const Status status = load();
    if (!status.is_ok()) return Status(status.code(), "loading " + kind + " from '" + dir + "': " + status.message());
    std::cerr << "edgemm serve: " << kind << " loaded in "
              << std::chrono::duration<double>(Clock::now() - start).count() << " s" << std::endl;
    return Status::ok();
  };
  if (!o.ocr_dir.empty()) {
    EDGEMM_RETURN_IF_ERROR(timed("ocr", o.ocr_dir, [&]() -> Status {
      ocr::OcrOptions options;
      options.models_dir = o.ocr_dir;
      options.threads = o.threads;
      EDGEMM_ASSIGN_OR_RETURN(state.ocr, ocr::OcrPipeline::create(options));
      state.ocr_slot = make_slot("ocr", o.ocr_dir, o.parallel, o.queue);
      return Status::ok();
    }));
  }
  if (!o.clip_dir.empty()) {
    EDGEMM_RETURN_IF_ERROR(timed("clip", o.clip_dir, [&]() -> Status {
      clip::ClipOptions options;
      options.threads = o.threads;
      EDGEMM_ASSIGN_OR_RETURN(clip::ClipModel model, clip::ClipModel::load(o.clip_dir, options));
      state.clip = std::move(model);
      state.clip_slot = make_slot("clip", o.clip_dir, o.parallel, o.queue);
      return Status::ok();
    }));
  }
  if (!o.vlm_dir.empty()) {
    EDGEMM_RETURN_IF_ERROR(timed("vlm", o.vlm_dir, [&]() -> Status {
      vlm::VlmOptions options;
      options.threads = o.threads;
      options.decoder_file = o.vlm_decoder;
      EDGEMM_ASSIGN_OR_RETURN(vlm::VlmModel model, vlm::VlmModel::load(o.vlm_dir, options));
      ServedVlm served;
      static_cast<ServedModel&>(served) = make_slot("vlm", o.vlm_dir, 1, o.queue);  // one generation at a time
      served.model = std::move(model);
      state.vlm = std::move(served);
      return Status::ok();
    }));
  }
  return Status::ok();
}

std::vector<const ServedModel*> served_models(const ServerState& state) {
  std::vector<const ServedModel*> models;
  if (state.ocr_slot) models.push_back(&*state.ocr_slot);
  if (state.clip_slot) models.push_back(&*state.clip_slot);
  if (state.vlm) models.push_back(&*state.vlm);
  return models;
}

void handle_models(httplib::Response& res, const ServerState& state) {
  Json data = Json::array();
  for (const ServedModel* m : served_models(state)) {
    data.push_back(
        {{"id", m->kind}, {"object", "model"}, {"created", 0}, {"owned_by", "edgemm"}, {"folder", m->folder}});
  }
  send_json(res, {{"object", "list"}, {"data", data}});
}

void handle_health(httplib::Response& res, const ServerState& state) {
  if (state.draining) return send_error(res, 503, "the server is shutting down", "unavailable_error", "draining");
  if (!state.ready) {
    res.set_header("Retry-After", "1");
    return send_error(res, 503, "the models are loading", "unavailable_error", "loading");
  }
  send_json(res, {{"status", "ok"}});
}

void handle_metrics(httplib::Response& res, const ServerState& state) {
  std::vector<Metrics::ModelLoad> loads;
  if (state.ready) {
    for (const ServedModel* m : served_models(state)) {
      loads.push_back({m->kind, m->admission->running(), m->admission->waiting()});
    }
  }
  res.set_content(state.metrics.render(loads, state.ready && !state.draining), "text/plain; version=0.0.4");
}

/// Before routing: answers 401 without the key, 503 while loading or draining.
httplib::Server::HandlerResponse check_request(const httplib::Request& req, httplib::Response& res,
                                               const ServerState& state) {
  if (is_public(req.path)) return httplib::Server::HandlerResponse::Unhandled;
  if (!state.options.api_key.empty() && !has_key(req.get_header_value("Authorization"), state.options.api_key)) {
    send_error(res, 401, "missing or wrong API key: send 'Authorization: Bearer KEY' (--api-key)",
               "authentication_error", "invalid_api_key");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.path == "/metrics") return httplib::Server::HandlerResponse::Unhandled;
  if (state.draining) {
    send_error(res, 503, "the server is shutting down", "unavailable_error", "draining");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (!state.ready) {
    res.set_header("Retry-After", "1");
    send_error(res, 503, "the models are loading", "unavailable_error", "loading");
    return httplib::Server::HandlerResponse::Handled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

void send_too_large(httplib::Response& res, const ServerState& state) {
  res.set_header("Connection", "close");  // the rest of the body is not read
  send_error(
      res, 413,
      "the request body is larger than " + std::to_string(state.options.max_body_bytes) + " bytes (--max-body-mb)",
      "invalid_request_error", "request_too_large");
}

/// Gives the errors httplib answers itself (404, 413, 400 for a malformed request) OpenAI's body.
void fill_error(const httplib::Request& req, httplib::Response& res, const ServerState& state) {
  if (!res.body.empty()) return;
  switch (res.status) {
    case 404:
      return send_error(res, 404, "no endpoint " + req.method + " " + req.path, "invalid_request_error", "not_found");
    case 413:
      return send_too_large(res, state);
    case 400:
      if (req.method == "POST" && !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
        return send_error(res, 400, "a POST needs a body with a Content-Length (or chunked Transfer-Encoding)",
                          "invalid_request_error");
      }
      [[fallthrough]];
    default:
      return send_error(res, res.status,
                        "the HTTP request could not be handled (status " + std::to_string(res.status) + ")",
                        res.status >= 500 ? "server_error" : "invalid_request_error");
  }
}

using Endpoint = void (*)(const httplib::Request&, httplib::Response&, ServerState&);

/// A POST route that reads the body itself, refusing it with 413 as soon as it passes
/// --max-body-mb: cpp-httplib holds only a declared Content-Length to the limit, not a chunked
/// body, and reading it here also keeps httplib from parsing form-encoded bodies (8 KiB at most).
httplib::Server::HandlerWithContentReader post_route(ServerState& state, Endpoint endpoint) {
  return [&state, endpoint](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    const auto limit = static_cast<size_t>(state.options.max_body_bytes);
    if (std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) > limit) {
      return send_too_large(res, state);
    }
    httplib::Request whole = req;
    bool too_large = false;
    const bool complete = read([&](const char* data, size_t size) {
      too_large = whole.body.size() + size > limit;
      if (!too_large) whole.body.append(data, size);
      return !too_large;
    });
    if (too_large) return send_too_large(res, state);
    if (!complete) {
      return send_error(res, 400,
                        "the request body could not be read: cut short, malformed chunks, or a POST with neither "
                        "Content-Length nor chunked Transfer-Encoding",
                        "invalid_request_error");
    }
    endpoint(whole, res, state);
  };
}

void handle_chat_route(const httplib::Request& req, httplib::Response& res, ServerState& state) {
  if (!state.vlm) {
    return send_error(res, 404, "no vlm model is loaded (start edgemm serve with --vlm DIR)", "invalid_request_error",
                      "model_not_found");
  }
  handle_chat(req, res, state);
}

void add_routes(httplib::Server& server, ServerState& state) {
  server.Post("/v1/chat/completions", post_route(state, handle_chat_route));
  server.Post("/v1/embeddings", post_route(state, handle_embeddings));
  server.Post("/v1/ocr", post_route(state, handle_ocr));
  for (const char* path : {"/v1/models", "/models"}) {
    server.Get(path, [&state](const httplib::Request&, httplib::Response& res) { handle_models(res, state); });
  }
  for (const char* path : {"/health", "/v1/health"}) {
    server.Get(path, [&state](const httplib::Request&, httplib::Response& res) { handle_health(res, state); });
  }
  server.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) { handle_metrics(res, state); });
  server.Get("/", [&state](const httplib::Request& req, httplib::Response& res) { handle_page(req, res, state); });
}

/// Request counts and latencies, measured from routing to the last byte written.
thread_local Clock::time_point t_request_start;

void configure(httplib::Server& server, ServerState& state, size_t http_threads) {
  server.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which lets a second server
  // bind the same port and silently take half of the connections.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Headers and body go out in separate writes: with Nagle's algorithm the second waits for the
  // client's delayed ACK (40 ms on Linux) on every keep-alive request.
  server.set_tcp_nodelay(true);
  server.set_payload_max_length(static_cast<size_t>(state.options.max_body_bytes));
  server.set_read_timeout(10);  // a client silent this long mid-request is dropped
  // cpp-httplib closes a keep-alive connection after 5 requests by default; a client that sends
  // its next request as the close arrives sees a reset. nginx's keepalive_requests default:
  server.set_keep_alive_max_count(1000);
  server.set_write_timeout(30);
  server.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    t_request_start = Clock::now();
    return check_request(req, res, state);
  });
  server.set_error_handler(
      [&state](const httplib::Request& req, httplib::Response& res) { fill_error(req, res, state); });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "internal error: " + what, "server_error");
  });
  server.set_logger([&state](const httplib::Request& req, const httplib::Response& res) {
    // Requests httplib refuses before routing (413, a malformed request line) count 0 s.
    const double seconds = t_request_start == Clock::time_point{}
                               ? 0
                               : std::chrono::duration<double>(Clock::now() - t_request_start).count();
    t_request_start = {};
    state.metrics.add_request(route_label(req.path), res.status, seconds);
  });
  add_routes(server, state);
}

}  // namespace

Status run_server(const ServeOptions& options) {
  if (options.ocr_dir.empty() && options.clip_dir.empty() && options.vlm_dir.empty()) {
    return Status(StatusCode::kInvalidArgument, "no model to serve: give --ocr, --clip and/or --vlm");
  }
  ServerState state(options);
  httplib::Server server;
  const int models = !options.ocr_dir.empty() + !options.clip_dir.empty() + !options.vlm_dir.empty();
  // Enough workers that every request a model admits or queues has one, plus 32 for connections
  // that are idle, slow, or asking for health, metrics or the page (each connection holds one).
  configure(server, state, static_cast<size_t>(models * (options.parallel + options.queue) + 32));
  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                                     : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    return Status(StatusCode::kIo, "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                                       " (address in use, not an address of this machine, or not permitted)");
  }
  const bool ipv6 = options.host.find(':') != std::string::npos;
  const std::string url = "http://" + (ipv6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(port);
  print_event(state, {{"event", "listening"}, {"host", options.host}, {"port", port}, {"url", url}},
              "listening on " + url + " (loading models; /health answers 503 until they are ready)");

  // stop() does nothing before listen_after_bind() runs, so the loader and the signal handler
  // wait for it (or for its end).
  std::atomic<bool> finished{false};
  auto stop_server = [&server, &finished] {
    while (!server.is_running() && !finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
  };
  Status load_status;
  std::thread loader([&] {
    load_status = load_models(state);
    if (!load_status.is_ok()) return stop_server();
    state.ready = true;
    Json names = Json::array();
    for (const ServedModel* m : served_models(state)) names.push_back(m->kind);
    print_event(state, {{"event", "ready"}, {"models", names}}, "ready: " + names.dump());
  });
  set_interrupt_handler([&] {
    std::cerr << "edgemm serve: stopping: finishing the requests in flight (a second signal ends at once)" << std::endl;
    state.draining = true;  // requests already admitted or queued still run
    stop_server();
  });
  server.listen_after_bind();
  finished = true;
  set_interrupt_handler({});
  loader.join();
  if (!load_status.is_ok()) return load_status;
  print_event(state, {{"event", "stopped"}}, "stopped");
  return Status::ok();
}

}  // namespace edgemm::cli::serve
