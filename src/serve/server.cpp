#include "serve/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <array>
#include <cerrno>
#include <atomic>
#include <charconv>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "runtime/session.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/model_runner.h"
#include "serve/protocol.h"
#include "serve/trace.h"

namespace wf::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Responder = std::function<void(Response)>;

constexpr const char* kServerName = "warpforge";
constexpr const char* kServerVersion = "0.1.0";
constexpr auto kIdleTimeout = std::chrono::seconds(120);  // a keep-alive connection waiting for a request
constexpr auto kIoTimeout = std::chrono::seconds(60);     // reading one request, writing one response
constexpr size_t kHeaderLimit = 64 * 1024;

// Why a request's scope was stopped.
enum class StopReason : int { kNone = 0, kDeadline, kDisconnect };

// One request's scope: its deadline and the stop source that its deadline timer and its
// connection's disconnect watch trigger. Owned by the connection while the request is open.
struct RequestScope {
  std::string id;                      // X-Request-Id, or generated
  std::string model;                   // for logs and metrics; empty for non-model routes
  Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> deadline;
  bool watchDisconnect = false;        // set by handlers that answer asynchronously
  std::stop_source stop;
  std::atomic<StopReason> reason{StopReason::kNone};
  std::optional<std::stop_callback<std::function<void()>>> onStop;
  double queueSeconds = -1;
  int64_t batchRows = 0;

  void requestStop(StopReason why) {
    StopReason none = StopReason::kNone;
    reason.compare_exchange_strong(none, why);
    stop.request_stop();
  }
};

Response makeResponse(const Request& req, http::status status, std::string body, std::string_view contentType) {
  Response res{status, req.version()};
  res.set(http::field::server, kServerName);
  res.set(http::field::content_type, contentType);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response jsonResponse(const Request& req, http::status status, const json& body) {
  return makeResponse(req, status, body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

Response errorResponse(const Request& req, int status, const std::string& message) {
  return jsonResponse(req, static_cast<http::status>(status), json{{"error", message}});
}

std::optional<int64_t> parseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> splitPath(std::string_view target) {
  if (size_t q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  std::vector<std::string_view> parts;
  while (!target.empty()) {
    size_t slash = target.find('/');
    std::string_view part = target.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    target = target.substr(slash + 1);
  }
  return parts;
}

class Server;

// One TCP connection: reads requests one at a time (keep-alive), hands each to the server, and
// while an answer is pending watches the socket for the client going away.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Server& server) : stream_(std::move(socket)), timer_(stream_.get_executor()), server_(server) {}
  void start() { net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->readHeader(); }); }

 private:
  void readHeader();
  void onHeader(beast::error_code ec);
  void readBody();
  void onBody(beast::error_code ec);
  void dispatchRequest();
  void watchDisconnect();
  void deliver(Response res);
  void onWritten(bool keepAlive, beast::error_code ec);
  void failRequest(int status, const std::string& message);
  void lingeringClose();
  void finishRequest(int status);

  beast::tcp_stream stream_;
  net::steady_timer timer_;  // the pending request's deadline
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<RequestScope> scope_;
  Request request_;
  bool pending_ = false;      // a request is being answered
  bool peerGone_ = false;
  bool counted_ = false;      // the request counts as in flight
  Response response_;
  std::array<char, 4096> discard_{};
  std::string method_, target_;  // of the pending request, for the log line
  Server& server_;
};

// SIGTERM/SIGINT while the models load (compiling for a GPU can take a while) are remembered by
// this handler; serve() then stops instead of starting, and run() drains at once if one arrives
// before its own signal handling is in place.
std::atomic<int> stopDuringLoad{0};
extern "C" void rememberStop(int signal) { stopDuringLoad.store(signal); }

class Server {
 public:
  explicit Server(const ServeOptions& options) : options_(options) {}

  Status load() {
    auto device = DeviceSpec::parse(options_.device);
    if (!device) return device.status().withContext("--device");
    if (!options_.traceFile.empty()) {
      auto trace = TraceWriter::open(options_.traceFile);
      if (!trace) return trace.status();
      trace_ = std::move(*trace);
      trace_->lane(0, "requests");
    }
    for (const std::string& spec : options_.packages) {
      std::string name, dir = spec;
      if (size_t eq = spec.find('='); eq != std::string::npos) {
        name = spec.substr(0, eq);
        dir = spec.substr(eq + 1);
      }
      SessionOptions sessionOptions;
      sessionOptions.device = *device;
      sessionOptions.compile = options_.compile;
      sessionOptions.compile.recordTimings = trace_ != nullptr;
      // On a static-shape backend batches are padded to powers of two (model_runner.cpp): one
      // specialization per power up to --max-batch.
      sessionOptions.maxSpecializations =
          static_cast<int>(std::bit_width(static_cast<uint64_t>(std::max<int64_t>(1, options_.maxBatch)))) + 1;
      auto session = Session::open(dir, sessionOptions);
      if (!session) return session.status();
      if (name.empty()) name = (*session)->manifest().name;
      if (name.empty() || name.find('/') != std::string::npos)
        return invalidArgument(dir + ": model name '" + name + "' is not usable in a URL; serve it as NAME=" + dir);
      if (models_.count(name)) return invalidArgument("model '" + name + "' is served twice (" + dir + "); rename one with NAME=PKG");
      std::string deviceName = (*session)->deviceName();
      BatchingOptions batching;
      batching.maxBatch = std::max<int64_t>(1, options_.maxBatch);
      batching.batchTimeout = std::chrono::microseconds(std::max<int64_t>(0, options_.batchTimeoutUs));
      batching.maxQueue = std::max<size_t>(1, options_.maxQueue);
      metrics_.addModel(name, deviceName, batching.maxBatch);
      auto runner = std::make_unique<ModelRunner>(name, std::move(*session), batching, &metrics_, trace_.get(),
                                                  static_cast<int>(models_.size()) + 1);
      logEvent(LogLevel::kInfo, "model_loaded",
               {{"model", name}, {"package", dir}, {"device", deviceName}, {"dynamic_batching", runner->batches()},
                {"max_batch", runner->maxBatch()}});
      models_.emplace(name, std::move(runner));
    }
    return Status::ok();
  }

  Status run(const std::function<void(int)>& onListening) {
    int threads = options_.httpThreads > 0 ? options_.httpThreads
                                           : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    net::io_context ioc(threads);
    tcp::acceptor acceptor(ioc);
    beast::error_code ec;
    auto address = net::ip::make_address(options_.host, ec);
    if (ec) return invalidArgument("--host '" + options_.host + "': " + ec.message());
    if (options_.port < 0 || options_.port > 65535) return invalidArgument("--port " + std::to_string(options_.port) + " is out of range");
    tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return invalidArgument("cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " + ec.message());
    acceptor_ = &acceptor;
    ioc_ = &ioc;

    net::signal_set signals(ioc, SIGTERM, SIGINT);
    signals.async_wait([this](beast::error_code e, int signal) {
      if (!e) beginDrain(signal == SIGTERM ? "SIGTERM" : "SIGINT");
    });
    if (int early = stopDuringLoad.exchange(0))
      net::post(ioc, [this, early] { beginDrain(early == SIGTERM ? "SIGTERM" : "SIGINT"); });
    accept();
    int port = acceptor.local_endpoint(ec).port();
    ready_ = true;
    logEvent(LogLevel::kInfo, "listening",
             {{"host", options_.host}, {"port", port}, {"models", models_.size()}, {"http_threads", threads}});
    onListening(port);

    {
      std::vector<std::jthread> pool;
      for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { runIo(ioc); });
      runIo(ioc);
    }  // joined
    // Every I/O thread is done; stop the models (failing anything still queued, which only a drain
    // timeout leaves) before the io_context and its pending handlers go away.
    for (auto& [name, runner] : models_) runner->stop();
    acceptor_ = nullptr;
    ioc_ = nullptr;
    logEvent(LogLevel::kInfo, "stopped", {{"inflight", inflight_.load()}});
    return Status::ok();
  }

  // Runs the io_context until it stops; an exception from a handler is logged and the thread goes on.
  static void runIo(net::io_context& ioc) {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        logEvent(LogLevel::kError, "io_exception", {{"what", e.what()}});
      } catch (...) {
        logEvent(LogLevel::kError, "io_exception", {{"what", "unknown"}});
      }
    }
  }

  // Called on the connection's strand with a complete request; `respond` may be called from any
  // thread, exactly once.
  void handle(Request& req, const std::shared_ptr<RequestScope>& scope, Responder respond) {
    try {
      route(req, scope, respond);
    } catch (const std::exception& e) {
      logEvent(LogLevel::kError, "handler_exception", {{"request_id", scope->id}, {"what", e.what()}});
      respond(errorResponse(req, 500, std::string("internal error: ") + e.what()));
    } catch (...) {
      respond(errorResponse(req, 500, "internal error"));
    }
  }

  const ServeOptions& options() const { return options_; }
  TraceWriter* trace() { return trace_.get(); }
  bool draining() const { return draining_; }
  // Requests read and not yet written back: what a drain waits for.
  void addInflight(int64_t delta) { inflight_ += delta; }
  Metrics& metrics() { return metrics_; }
  std::string nextRequestId() { return "r-" + std::to_string(++requestCounter_); }

 private:
  void accept() {
    acceptor_->async_accept(net::make_strand(*ioc_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == net::error::operation_aborted || draining_) return;
        logEvent(LogLevel::kWarning, "accept_failed", {{"error", ec.message()}});
      } else {
        socket.set_option(tcp::no_delay(true), ec);
        std::make_shared<Connection>(std::move(socket), *this)->start();
      }
      if (!draining_) accept();
    });
  }

  void beginDrain(const std::string& why) {
    if (draining_.exchange(true)) return;
    ready_ = false;
    drainStart_ = Clock::now();
    logEvent(LogLevel::kInfo, "draining", {{"signal", why}, {"inflight", inflight_.load()}});
    net::post(acceptor_->get_executor(), [this] {
      beast::error_code ignored;
      acceptor_->close(ignored);
    });
    drainTimer_.emplace(*ioc_);
    pollDrain();
  }

  void pollDrain() {
    double waited = std::chrono::duration<double>(Clock::now() - drainStart_).count();
    if (inflight_.load() == 0 || waited >= options_.drainTimeoutSeconds) {
      if (inflight_.load() != 0)
        logEvent(LogLevel::kWarning, "drain_timeout", {{"inflight", inflight_.load()}, {"waited_s", waited}});
      else
        logEvent(LogLevel::kInfo, "drained", {{"waited_s", waited}});
      ioc_->stop();
      return;
    }
    drainTimer_->expires_after(std::chrono::milliseconds(10));
    drainTimer_->async_wait([this](beast::error_code ec) {
      if (!ec) pollDrain();
    });
  }

  ModelRunner* findModel(std::string_view name) {
    auto it = models_.find(std::string(name));
    return it == models_.end() ? nullptr : it->second.get();
  }

  void route(Request& req, const std::shared_ptr<RequestScope>& scope, const Responder& respond) {
    std::vector<std::string_view> path = splitPath(req.target());
    const bool get = req.method() == http::verb::get;
    const bool post = req.method() == http::verb::post;
    auto methodNotAllowed = [&] {
      respond(errorResponse(req, 405, "method " + std::string(req.method_string()) + " is not allowed on " + std::string(req.target())));
    };
    if (path.size() == 1 && path[0] == "metrics") {
      if (!get) return methodNotAllowed();
      return respond(makeResponse(req, http::status::ok, metrics_.render(), "text/plain; version=0.0.4; charset=utf-8"));
    }
    if (path.empty() || path[0] != "v2")
      return respond(errorResponse(req, 404, "no route for " + std::string(req.target())));
    if (path.size() == 1) {
      if (!get) return methodNotAllowed();
      return respond(jsonResponse(req, http::status::ok,
                                  {{"name", kServerName}, {"version", kServerVersion}, {"extensions", {"binary_tensor_data"}}}));
    }
    if (path[1] == "health" && path.size() == 3 && (path[2] == "live" || path[2] == "ready")) {
      if (!get) return methodNotAllowed();
      bool ok = path[2] == "live" || (ready_ && !draining_);
      return respond(makeResponse(req, ok ? http::status::ok : http::status::service_unavailable, "", "application/json"));
    }
    if (path[1] != "models" || path.size() < 3) return respond(errorResponse(req, 404, "no route for " + std::string(req.target())));
    scope->model = std::string(path[2]);
    ModelRunner* model = findModel(path[2]);
    size_t next = 3;
    if (path.size() >= 5 && path[3] == "versions") {
      if (model && path[4] != "1")
        return respond(errorResponse(req, 404, "model '" + scope->model + "' has no version '" + std::string(path[4]) + "' (only 1)"));
      next = 5;
    }
    if (!model) {
      std::string names;
      for (const auto& [name, runner] : models_) names += (names.empty() ? "'" : ", '") + name + "'";
      if (path.size() > next && path[next] == "infer") metrics_.observeRequest("", 404, 0);
      return respond(errorResponse(req, 404, "unknown model '" + scope->model + "'; this server has " + names));
    }
    if (path.size() == next) {
      if (!get) return methodNotAllowed();
      json meta = modelMetadata(model->manifest());
      meta["name"] = model->name();
      return respond(jsonResponse(req, http::status::ok, meta));
    }
    if (path.size() == next + 1 && path[next] == "ready") {
      if (!get) return methodNotAllowed();
      return respond(makeResponse(req, ready_ && !draining_ ? http::status::ok : http::status::service_unavailable, "",
                                  "application/json"));
    }
    if (path.size() == next + 1 && path[next] == "infer") {
      if (!post) return methodNotAllowed();
      return infer(req, *model, scope, respond);
    }
    respond(errorResponse(req, 404, "no route for " + std::string(req.target())));
  }

  void infer(Request& req, ModelRunner& model, const std::shared_ptr<RequestScope>& scope, const Responder& respond) {
    auto fail = [&](int status, const std::string& message) {
      metrics_.observeRequest(model.name(), status, std::chrono::duration<double>(Clock::now() - scope->start).count());
      respond(errorResponse(req, status, message));
    };
    if (draining_) return fail(503, "the server is shutting down");
    std::optional<size_t> headerLength;
    if (auto it = req.find("Inference-Header-Content-Length"); it != req.end()) {
      auto n = parseInt(it->value());
      if (!n || *n < 0) return fail(400, "Inference-Header-Content-Length '" + std::string(it->value()) + "' is not a byte count");
      headerLength = static_cast<size_t>(*n);
    }
    std::optional<int64_t> timeoutUs;
    if (auto it = req.find("Inference-Timeout-Ms"); it != req.end()) {
      auto ms = parseInt(it->value());
      if (!ms || *ms <= 0) return fail(400, "Inference-Timeout-Ms '" + std::string(it->value()) + "' is not a positive integer");
      timeoutUs = *ms * 1000;
    }
    auto parsed = parseInferRequest(req.body(), headerLength);
    if (!parsed) return fail(400, "model '" + model.name() + "': " + parsed.status().message());
    auto request = std::make_shared<InferRequest>(std::move(*parsed));
    if (request->timeoutUs) timeoutUs = request->timeoutUs;
    if (!timeoutUs && options_.requestTimeoutMs > 0) timeoutUs = options_.requestTimeoutMs * 1000;
    // The outputs asked for must exist; checked before anything runs.
    for (const RequestedOutput& out : request->outputs) {
      bool known = false;
      for (const TensorSpec& spec : model.manifest().outputs) known = known || spec.name == out.name;
      if (!known) return fail(400, "model '" + model.name() + "': output '" + out.name + "' is not one of its outputs");
    }
    auto prepared = model.prepare(std::move(request->inputs));
    if (!prepared) return fail(400, "model '" + model.name() + "': " + prepared.status().message());
    if (timeoutUs) scope->deadline = scope->start + std::chrono::microseconds(*timeoutUs);

    Server* server = this;
    std::string modelName = model.name();
    const unsigned version = req.version();
    const bool keepAlive = req.keep_alive();
    net::any_io_executor executor = ioc_->get_executor();
    auto job = std::make_shared<Job>(
        std::move(prepared->first), prepared->second, scope->deadline,
        [server, executor, scope, request, modelName, respond, version, keepAlive](JobResult result) {
          // Encoding runs on an I/O thread, off the model's worker.
          net::post(executor, [server, scope, request, modelName, respond, version, keepAlive,
                               result = std::move(result)]() mutable {
            Request req;  // what the response needs of the request (its body is long gone)
            req.version(version);
            req.keep_alive(keepAlive);
            scope->queueSeconds = result.queueSeconds;
            scope->batchRows = result.batchRows;
            double seconds = std::chrono::duration<double>(Clock::now() - scope->start).count();
            if (result.httpStatus != 200) {
              server->metrics().observeRequest(modelName, result.httpStatus, seconds);
              respond(errorResponse(req, result.httpStatus, result.error));
              return;
            }
            server->metrics().observeQueueTime(modelName, result.queueSeconds);
            auto encoded = encodeInferResponse(modelName, *request, result.outputs);
            if (!encoded) {
              server->metrics().observeRequest(modelName, 500, seconds);
              respond(errorResponse(req, 500, encoded.status().message()));
              return;
            }
            Response res;
            if (encoded->jsonLength) {
              res = makeResponse(req, http::status::ok, std::move(encoded->body), "application/octet-stream");
              res.set("Inference-Header-Content-Length", std::to_string(*encoded->jsonLength));
            } else {
              res = makeResponse(req, http::status::ok, std::move(encoded->body), "application/json");
            }
            server->metrics().observeRequest(modelName, 200, std::chrono::duration<double>(Clock::now() - scope->start).count());
            respond(std::move(res));
          });
        });
    if (!model.submit(job)) return failQueued(model, scope, respond, version, keepAlive);
    // Stopping the scope (deadline, disconnect) takes the job out of the queue if it is still
    // there; a job already running completes and is answered normally.
    std::weak_ptr<Job> weakJob = job;
    ModelRunner* runner = &model;
    std::weak_ptr<RequestScope> weakScope = scope;
    scope->watchDisconnect = true;
    scope->onStop.emplace(scope->stop.get_token(), std::function<void()>([this, runner, weakJob, weakScope, respond,
                                                                          version, keepAlive] {
      auto job = weakJob.lock();
      auto scope = weakScope.lock();
      if (!job || !scope || !runner->cancel(job)) return;
      bool deadline = scope->reason.load() == StopReason::kDeadline;
      int status = deadline ? 504 : 499;
      metrics_.observeRequest(runner->name(), status, std::chrono::duration<double>(Clock::now() - scope->start).count());
      Request stub;
      stub.version(version);
      stub.keep_alive(keepAlive && deadline);
      respond(errorResponse(stub, status,
                            deadline ? "deadline exceeded while queued for model '" + runner->name() + "'"
                                     : "client closed the connection"));
    }));
  }

  void failQueued(ModelRunner& model, const std::shared_ptr<RequestScope>& scope, const Responder& respond,
                  unsigned version, bool keepAlive) {
    // The job was not taken; its callback (which owns the request) never runs.
    metrics_.observeRequest(model.name(), 503, std::chrono::duration<double>(Clock::now() - scope->start).count());
    Request stub;
    stub.version(version);
    stub.keep_alive(keepAlive);
    std::string why = draining_ ? "the server is shutting down"
                                : "model '" + model.name() + "' has " + std::to_string(model.queueDepth()) +
                                      " requests queued (--max-queue); try again later";
    Response res = errorResponse(stub, 503, why);
    res.set(http::field::retry_after, "1");
    respond(std::move(res));
  }

  ServeOptions options_;
  Metrics metrics_;
  std::unique_ptr<TraceWriter> trace_;  // before the models, so that it is closed after their last run
  std::map<std::string, std::unique_ptr<ModelRunner>> models_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> inflight_{0};
  std::atomic<uint64_t> requestCounter_{0};
  Clock::time_point drainStart_{};
  net::io_context* ioc_ = nullptr;
  tcp::acceptor* acceptor_ = nullptr;
  std::optional<net::steady_timer> drainTimer_;
};

void Connection::readHeader() {
  parser_.emplace();
  parser_->body_limit(server_.options().maxBodyBytes);
  parser_->header_limit(kHeaderLimit);
  stream_.expires_after(kIdleTimeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->onHeader(ec); });
}

void Connection::onHeader(beast::error_code ec) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return;
  }
  if (ec) {
    if (ec == http::error::header_limit) return failRequest(431, "request header fields larger than " + std::to_string(kHeaderLimit) + " bytes");
    if (ec == http::error::body_limit)
      return failRequest(413, "request body is over the limit of " + std::to_string(server_.options().maxBodyBytes) + " bytes");
    if (ec.category() == http::make_error_code(http::error::bad_method).category() && parser_->got_some())
      return failRequest(400, "malformed HTTP request: " + ec.message());
    return;  // reset, or nothing read: just close
  }
  auto& header = parser_->get();
  if (auto length = parser_->content_length(); length && *length > server_.options().maxBodyBytes)
    return failRequest(413, "request body of " + std::to_string(*length) + " bytes is over the limit of " +
                                std::to_string(server_.options().maxBodyBytes) + " bytes");
  auto expect = header.find(http::field::expect);
  if (expect != header.end() && beast::iequals(expect->value(), "100-continue")) {
    auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, header.version());
    http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code e, size_t) {
      if (!e) self->readBody();
    });
    return;
  }
  readBody();
}

void Connection::readBody() {
  stream_.expires_after(kIoTimeout);
  http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) { self->onBody(ec); });
}

void Connection::onBody(beast::error_code ec) {
  if (ec == http::error::body_limit)
    return failRequest(413, "request body is over the limit of " + std::to_string(server_.options().maxBodyBytes) + " bytes");
  if (ec == http::error::partial_message || ec == beast::error::timeout) return;  // the client went away mid-body
  if (ec) {
    if (ec.category() == http::make_error_code(http::error::bad_method).category())
      return failRequest(400, "malformed HTTP request: " + ec.message());
    return;
  }
  stream_.expires_never();
  dispatchRequest();
}

void Connection::dispatchRequest() {
  request_ = parser_->release();
  scope_ = std::make_shared<RequestScope>();
  if (auto it = request_.find("X-Request-Id"); it != request_.end() && !it->value().empty() && it->value().size() <= 128)
    scope_->id = std::string(it->value());
  else
    scope_->id = server_.nextRequestId();
  pending_ = true;
  counted_ = true;
  server_.addInflight(1);
  server_.metrics().addInflight(1);  // until the response is ready (deliver)
  // The handler may move the request into its job; keep what the log line needs.
  auto self = shared_from_this();
  Responder respond = [self](Response res) {
    net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->deliver(std::move(res)); });
  };
  method_ = std::string(request_.method_string());
  target_ = std::string(request_.target());
  server_.handle(request_, scope_, std::move(respond));
  if (!pending_) return;
  if (scope_->deadline) {
    timer_.expires_at(*scope_->deadline);
    timer_.async_wait([self, scope = scope_](beast::error_code e) {
      if (!e) scope->requestStop(StopReason::kDeadline);
    });
  }
  if (scope_->watchDisconnect) watchDisconnect();
}

void Connection::watchDisconnect() {
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), scope = scope_](beast::error_code ec) {
    if (ec || !self->pending_ || scope != self->scope_) return;
    char byte;
    ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return;  // the next pipelined request; it is read once this one is answered
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->watchDisconnect();
    self->peerGone_ = true;
    scope->requestStop(StopReason::kDisconnect);
  });
}

void Connection::deliver(Response res) {
  if (!pending_) return;
  pending_ = false;
  server_.metrics().addInflight(-1);
  timer_.cancel();
  beast::error_code ignored;
  stream_.socket().cancel(ignored);  // the disconnect watch
  int status = static_cast<int>(res.result_int());
  res.set("X-Request-Id", scope_->id);
  if (server_.draining()) res.keep_alive(false);
  if (status >= 400 || server_.options().accessLog) {
    json fields = {{"request_id", scope_->id}, {"method", method_}, {"path", target_}, {"status", status},
                   {"latency_ms", std::chrono::duration<double, std::milli>(Clock::now() - scope_->start).count()}};
    if (!scope_->model.empty()) fields["model"] = scope_->model;
    if (scope_->queueSeconds >= 0) fields["queue_ms"] = scope_->queueSeconds * 1000;
    if (scope_->batchRows > 0) fields["batch_rows"] = scope_->batchRows;
    if (status >= 400) {
      json body = json::parse(res.body(), nullptr, false);
      if (body.is_object() && body.contains("error")) fields["error"] = body["error"];
    }
    logEvent(status >= 500 ? LogLevel::kError : status >= 400 ? LogLevel::kWarning : LogLevel::kInfo, "request", fields);
  }
  if (TraceWriter* trace = server_.trace()) {
    json args = {{"request_id", scope_->id}, {"status", status}};
    if (scope_->queueSeconds >= 0) args["queue_ms"] = scope_->queueSeconds * 1000;
    if (scope_->batchRows > 0) args["batch_rows"] = scope_->batchRows;
    trace->asyncSpan(method_ + " " + target_, "request", scope_->id, scope_->start, Clock::now(), std::move(args));
  }
  if (peerGone_) {
    finishRequest(status);
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return;
  }
  response_ = std::move(res);
  bool keepAlive = response_.keep_alive();
  stream_.expires_after(kIoTimeout);
  http::async_write(stream_, response_, [self = shared_from_this(), keepAlive, status](beast::error_code ec, size_t) {
    self->finishRequest(status);
    self->onWritten(keepAlive, ec);
  });
}

void Connection::finishRequest(int) {
  scope_.reset();
  if (counted_) {
    counted_ = false;
    server_.addInflight(-1);
  }
}

void Connection::onWritten(bool keepAlive, beast::error_code ec) {
  if (ec) return;
  if (!keepAlive) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    return;
  }
  readHeader();
}

// An error found while reading the request (limits, malformed HTTP): answer it, close, and read
// what the client is still sending so that it sees the answer instead of a reset.
void Connection::failRequest(int status, const std::string& message) {
  Request stub;
  stub.version(11);
  stub.keep_alive(false);
  response_ = errorResponse(stub, status, message);
  logEvent(LogLevel::kWarning, "request", {{"request_id", server_.nextRequestId()}, {"status", status}, {"error", message}});
  stream_.expires_after(kIoTimeout);
  http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return;
    beast::error_code ignored;
    self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    self->stream_.expires_after(std::chrono::seconds(5));
    self->lingeringClose();
  });
}

void Connection::lingeringClose() {
  stream_.async_read_some(net::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
    if (!ec) self->lingeringClose();
  });
}

}  // namespace

void catchStopSignalsDuringStartup() {
  struct sigaction action {};
  action.sa_handler = rememberStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

Status serve(const ServeOptions& options, const std::function<void(int)>& onListening) {
  if (options.packages.empty()) return invalidArgument("no model package given");
  catchStopSignalsDuringStartup();
  Server server(options);
  WF_RETURN_IF_ERROR(server.load());
  if (int signal = stopDuringLoad.load()) {
    logEvent(LogLevel::kInfo, "stopped", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}, {"before", "serving"}});
    return Status::ok();
  }
  return server.run(onListening);
}

}  // namespace wf::serve
