"""An HTTPS proxy of the MLflow test's own (tests/run/mlflow_server.py): a certificate made
with openssl, and only requests with an accepted Authorization header let through."""
import http.server
import os
import ssl
import subprocess
import threading
import urllib.error
import urllib.request


class AuthProxy:
    """HTTPS in front of `upstream`, for requests whose Authorization header is one of
    `accepted`; others get MLflow's 401. Counts the TCP connections it served."""

    def __init__(self, root, upstream, accepted):
        cert, key = os.path.join(root, "cert.pem"), os.path.join(root, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        self.cert, self.connections, self.refused = cert, set(), 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the logger asks

            def log_message(self, *args):
                pass

            def forward(self):
                proxy.connections.add(self.client_address)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Authorization") not in accepted:
                    proxy.refused += 1
                    status, data = 401, b'{"error_code": "UNAUTHENTICATED", "message": "no"}'
                else:
                    request = urllib.request.Request(upstream + self.path, data=body or None,
                                                     method=self.command)
                    request.add_header("Content-Type", self.headers.get("Content-Type", ""))
                    try:
                        with urllib.request.urlopen(request, timeout=30) as answer:
                            status, data = answer.status, answer.read()
                    except urllib.error.HTTPError as e:
                        status, data = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.uri = f"https://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
