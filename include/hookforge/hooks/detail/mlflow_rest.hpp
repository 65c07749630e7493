// hookforge/hooks/detail/mlflow_rest.hpp — the calls of MLflow's tracking REST API (2.0)
// that MLflowLogger makes: experiments, runs, batches of metrics, params and tags, run
// status, and artifact uploads through a server that proxies them (--serve-artifacts).
//
//   mlflow::rest_client server("http://127.0.0.1:5000", {});
//   auto run = server.create_run(server.experiment_id("sr"), "espcn", tags, now_ms);
//   server.log_batch(run.run_id, metrics, {}, {});
//   server.update_run(run.run_id, "FINISHED", now_ms);
//
// Each call is one request over the client's one connection. A call the server refuses
// (an HTTP error, with MLflow's error_code and message) or does not answer throws
// request_failed, which says which; nothing is retried here (mlflow_sender.hpp decides).
// JSON with nlohmann/json; a metric that is not finite goes as MLflow's own clients send it
// ("NaN", "Infinity", "-Infinity": protobuf's JSON form of a double).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hookforge/hooks/detail/http_session.hpp"

namespace hookforge::detail::mlflow {

struct metric {
  std::string key;
  double value = 0;
  std::int64_t timestamp_ms = 0;
  std::int64_t step = 0;
};

/// A param or a tag.
struct key_value {
  std::string key;
  std::string value;
};

/// MLflow's limits on one runs/log-batch request (mlflow/utils/validation.py).
struct batch_limits {
  static constexpr std::size_t metrics = 1000;
  static constexpr std::size_t params = 100;
  static constexpr std::size_t tags = 100;
  static constexpr std::size_t entities = 1000;  ///< metrics, params and tags together
  static constexpr std::size_t key_length = 250;
  static constexpr std::size_t param_value_length = 6000;
  static constexpr std::size_t tag_value_length = 8000;
};

/// A call that did not succeed: `answered` false when the server could not be reached,
/// true when it refused the request (status and MLflow's error_code).
class request_failed : public std::runtime_error {
 public:
  request_failed(std::string what, bool answered, long status = 0, std::string error_code = {},
                 bool permanent = false)
      : std::runtime_error(std::move(what)),
        answered(answered),
        status(status),
        error_code(std::move(error_code)),
        permanent(permanent) {}
  bool answered;
  long status;
  std::string error_code;
  bool permanent;  ///< no answer that trying again will change (an untrusted certificate)
  /// Whether the same request may succeed later: no answer, or the server's own trouble.
  bool retryable() const { return !permanent && (!answered || status >= 500 || status == 429); }
};

struct run_info {
  std::string run_id;
  std::string experiment_id;
  std::string status;
  std::string artifact_uri;
  /// The step of each metric's latest value (runs/get: the highest step logged).
  std::map<std::string, std::int64_t> last_steps;
};

class rest_client {
 public:
  /// `tracking_uri`: http:// or https://, with a path prefix if the server has one.
  rest_client(std::string tracking_uri, http::session_options options)
      : uri_(std::move(tracking_uri)), http_(std::move(options)) {
    while (uri_.ends_with('/')) uri_.pop_back();
  }

  const std::string& uri() const { return uri_; }

  /// The id of the experiment named `name`, created when there is none.
  std::string experiment_id(const std::string& name) {
    try {
      return find_experiment(name);
    } catch (const request_failed& e) {
      if (e.error_code != "RESOURCE_DOES_NOT_EXIST") throw;
    }
    try {
      return call("POST", "experiments/create", {{"name", name}})
          .at("experiment_id")
          .get<std::string>();
    } catch (const request_failed& e) {  // another process created it meanwhile
      if (e.error_code != "RESOURCE_ALREADY_EXISTS") throw;
      return find_experiment(name);
    }
  }

  run_info create_run(const std::string& experiment_id, const std::string& run_name,
                      const std::string& user, const std::vector<key_value>& tags,
                      std::int64_t start_ms) {
    nlohmann::json body = {
        {"experiment_id", experiment_id}, {"start_time", start_ms}, {"tags", pairs(tags)}};
    if (!run_name.empty()) body["run_name"] = run_name;
    if (!user.empty()) body["user_id"] = user;
    return info_of(call("POST", "runs/create", body)["run"]);
  }

  run_info get_run(const std::string& run_id) {
    return info_of(call("GET", "runs/get?run_id=" + escape(run_id), {})["run"]);
  }

  void log_batch(const std::string& run_id, const std::vector<metric>& metrics,
                 const std::vector<key_value>& params, const std::vector<key_value>& tags) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : metrics)
      list.push_back({{"key", m.key},
                      {"value", number(m.value)},
                      {"timestamp", m.timestamp_ms},
                      {"step", m.step}});
    call("POST", "runs/log-batch",
         {{"run_id", run_id}, {"metrics", list}, {"params", pairs(params)}, {"tags", pairs(tags)}});
  }

  /// `status`: RUNNING, FINISHED, FAILED or KILLED; end_ms 0 leaves the end time unset.
  void update_run(const std::string& run_id, std::string_view status, std::int64_t end_ms) {
    nlohmann::json body = {{"run_id", run_id}, {"status", status}};
    if (end_ms > 0) body["end_time"] = end_ms;
    call("POST", "runs/update", body);
  }

  /// Whether the server stores this run's artifacts itself, so they can be uploaded to it:
  /// an artifact_uri of the `mlflow-artifacts:` scheme (a server with --serve-artifacts).
  static bool serves_artifacts(const run_info& run) {
    return run.artifact_uri.starts_with("mlflow-artifacts:");
  }

  /// Upload `file` as the artifact `name` (a relative path) of `run`.
  void upload_file(const run_info& run, const std::string& name,
                   const std::filesystem::path& file) {
    check(http_.put_file(artifact_url(run, name), file), "upload of " + name);
  }

  /// Upload `text` as the artifact `name` of `run`.
  void upload_text(const run_info& run, const std::string& name, const std::string& text) {
    check(http_.send("PUT", artifact_url(run, name), text, "text/plain"), "upload of " + name);
  }

 private:
  /// Where the server takes an artifact of `run`: its artifact_uri's path under the
  /// server's mlflow-artifacts API.
  std::string artifact_url(const run_info& run, const std::string& name) const {
    std::string_view rest = run.artifact_uri;
    rest.remove_prefix(std::string_view("mlflow-artifacts:").size());
    if (rest.starts_with("//")) rest = rest.substr(rest.find('/', 2));  // a host: the server's own
    while (rest.starts_with('/')) rest.remove_prefix(1);
    return fmt::format("{}/api/2.0/mlflow-artifacts/artifacts/{}/{}", uri_, rest, name);
  }

  std::string find_experiment(const std::string& name) {
    return call("GET", "experiments/get-by-name?experiment_name=" + escape(name), {})
        .at("experiment")
        .at("experiment_id")
        .get<std::string>();
  }

  static nlohmann::json pairs(const std::vector<key_value>& items) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [key, value] : items) list.push_back({{"key", key}, {"value", value}});
    return list;
  }

  /// Protobuf's JSON form of a double: a bare NaN makes MLflow's parser store junk and drop
  /// the rest of the batch.
  static nlohmann::json number(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
    return value;
  }

  static run_info info_of(const nlohmann::json& run) {
    const auto& info = run.at("info");
    run_info out{info.at("run_id").get<std::string>(),
                 info.at("experiment_id").get<std::string>(),
                 info.value("status", ""),
                 info.value("artifact_uri", ""),
                 {}};
    if (run.contains("data") && run["data"].contains("metrics"))
      for (const auto& m : run["data"]["metrics"])
        out.last_steps[m.at("key").get<std::string>()] = m.value("step", std::int64_t{0});
    return out;
  }

  std::string escape(const std::string& text) {
    CURL* curl = curl_easy_init();  // curl_easy_escape needs a handle; it keeps no state
    char* escaped = curl_easy_escape(curl, text.data(), static_cast<int>(text.size()));
    std::string out = escaped ? escaped : "";
    curl_free(escaped);
    curl_easy_cleanup(curl);
    return out;
  }

  nlohmann::json call(std::string_view method, const std::string& endpoint,
                      const nlohmann::json& body) {
    const auto answer = http_.send(method, uri_ + "/api/2.0/mlflow/" + endpoint,
                                   method == "GET" ? std::string() : body.dump());
    check(answer, endpoint.substr(0, endpoint.find('?')));
    auto parsed = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded())
      throw request_failed(fmt::format("{}: {} answered with no JSON", endpoint, uri_), true,
                           answer.status);
    return parsed;
  }

  /// Throws request_failed for no answer or an HTTP error.
  void check(const http::response& answer, const std::string& what) const {
    if (!answer.error.empty())
      throw request_failed(fmt::format("{}: no answer from {} ({})", what, uri_, answer.error),
                           false, 0, {}, answer.permanent);
    if (answer.status >= 200 && answer.status < 300) return;
    std::string code, message = answer.body.substr(0, 300);
    auto parsed = nlohmann::json::parse(answer.body, nullptr, false);
    if (parsed.is_object()) {
      code = parsed.value("error_code", "");
      message = parsed.value("message", message);
    }
    throw request_failed(
        fmt::format("{}: {} answered HTTP {}{}{}", what, uri_, answer.status,
                    code.empty() ? "" : " " + code, message.empty() ? "" : ": " + message),
        true, answer.status, code);
  }

  std::string uri_;
  http::session http_;
};

}  // namespace hookforge::detail::mlflow
