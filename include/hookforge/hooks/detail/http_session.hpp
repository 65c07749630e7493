// hookforge/hooks/detail/http_session.hpp — HTTP requests over one kept-alive connection,
// with libcurl: what MLflowLogger talks to a tracking server with; nothing of it knows MLflow.
//
//   http::session http({.token = "…", .timeout_seconds = 10});
//   auto answer = http.send("POST", "http://127.0.0.1:5000/api/2.0/…", R"({"name": "a"})");
//   if (!answer.error.empty()) …       // no answer: refused, timed out, TLS failed
//   else if (answer.status != 200) …   // the server's answer, body in answer.body
//
// One easy handle serves every request, so libcurl keeps the connection open between them
// (HTTP keep-alive; HTTPS resumes its session). A session is used by one thread at a time.
// HTTPS verifies the server's certificate unless `insecure`; `ca_file` names the CA bundle of
// a server with its own CA. Authentication as MLflow's clients send it: a bearer token, or
// basic auth with a user name and password.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <curl/curl.h>
#include <fmt/format.h>

namespace hookforge::detail::http {

struct session_options {
  std::string token = {};     ///< sent as "Authorization: Bearer <token>" (without username)
  std::string username = {};  ///< with password: basic auth, when set
  std::string password = {};
  bool insecure = false;               ///< HTTPS without verifying the certificate
  std::filesystem::path ca_file = {};  ///< the CA bundle to verify with (empty: the system's)
  double connect_timeout_seconds = 5;  ///< to open a connection
  double timeout_seconds = 30;         ///< a whole request, answer included
};

struct response {
  long status = 0;    ///< the HTTP status; 0 when there was no answer
  std::string body;   ///< the answer's body
  std::string error;  ///< why there was no answer (libcurl's words); empty when there was one
  /// No answer, and none will come by trying again: the server's certificate is not trusted,
  /// the address is not a URL libcurl can use.
  bool permanent = false;
};

/// libcurl's global state, set up once per process before the first handle.
inline void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("libcurl: curl_global_init failed");
  });
}

class session {
 public:
  explicit session(session_options options = {}) : options_(std::move(options)) {
    init_curl_once();
    handle_ = curl_easy_init();
    if (!handle_) throw std::runtime_error("libcurl: curl_easy_init failed");
  }
  ~session() {
    if (headers_) curl_slist_free_all(headers_);
    curl_easy_cleanup(handle_);
  }
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// `method` ("GET", "POST", "PUT") to `url` with `body` (none for a GET).
  response send(std::string_view method, const std::string& url, const std::string& body = {},
                std::string_view content_type = "application/json") {
    prepare(method, url, content_type);
    if (method != "GET") {
      curl_easy_setopt(handle_, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(handle_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    return perform();
  }

  /// PUT the file at `path` to `url` as its body (an artifact upload).
  response put_file(const std::string& url, const std::filesystem::path& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) return {0, {}, fmt::format("cannot read {}", path.string())};
    prepare("PUT", url, "application/octet-stream");
    curl_easy_setopt(handle_, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(handle_, CURLOPT_READDATA, file);
    curl_easy_setopt(handle_, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(std::filesystem::file_size(path)));
    auto answer = perform();
    std::fclose(file);
    return answer;
  }

 private:
  static std::size_t append(char* data, std::size_t size, std::size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
  }

  /// The handle reset to `method` on `url`, with the session's options (the connection
  /// cache survives curl_easy_reset).
  void prepare(std::string_view method, const std::string& url, std::string_view content_type) {
    curl_easy_reset(handle_);
    if (headers_) curl_slist_free_all(std::exchange(headers_, nullptr));
    headers_ = curl_slist_append(headers_, fmt::format("Content-Type: {}", content_type).c_str());
    if (!options_.token.empty() && options_.username.empty())  // basic auth wins, as in MLflow
      headers_ = curl_slist_append(headers_,
                                   fmt::format("Authorization: Bearer {}", options_.token).c_str());
    curl_easy_setopt(handle_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(handle_, CURLOPT_NOSIGNAL, 1L);  // another thread's signals stay its own
    curl_easy_setopt(handle_, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout_seconds * 1000));
    curl_easy_setopt(handle_, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(options_.timeout_seconds * 1000));
    curl_easy_setopt(handle_, CURLOPT_WRITEFUNCTION, &session::append);
    curl_easy_setopt(handle_, CURLOPT_WRITEDATA, &body_);
    curl_easy_setopt(handle_, CURLOPT_ERRORBUFFER, error_);
    if (!options_.username.empty()) {
      curl_easy_setopt(handle_, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(handle_, CURLOPT_USERNAME, options_.username.c_str());
      curl_easy_setopt(handle_, CURLOPT_PASSWORD, options_.password.c_str());
    }
    if (options_.insecure) {
      curl_easy_setopt(handle_, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(handle_, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!options_.ca_file.empty())
      curl_easy_setopt(handle_, CURLOPT_CAINFO, options_.ca_file.c_str());
    if (method != "GET" && method != "POST")
      curl_easy_setopt(handle_, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
    body_.clear();
    error_[0] = '\0';
  }

  response perform() {
    const CURLcode code = curl_easy_perform(handle_);
    response answer;
    if (code != CURLE_OK) {
      answer.error = error_[0] ? std::string(error_) : std::string(curl_easy_strerror(code));
      answer.permanent = code == CURLE_PEER_FAILED_VERIFICATION ||
                         code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM ||
                         code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT;
      return answer;
    }
    curl_easy_getinfo(handle_, CURLINFO_RESPONSE_CODE, &answer.status);
    answer.body = std::move(body_);
    return answer;
  }

  session_options options_;
  CURL* handle_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::string body_;
  char error_[CURL_ERROR_SIZE] = {};
};

}  // namespace hookforge::detail::http
