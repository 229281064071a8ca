# The topo image: topo-webhook, topo-sync, topoassign and its kubectl-topo
# link in /usr/bin, on Debian 12 slim with only the libraries they link, run
# as the unprivileged uid/gid 65532. The Helm chart (charts/topo) runs
# ghcr.io/topo-project/topo:<version>, <version> being project(VERSION) in
# CMakeLists.txt:
#
#   docker build -t ghcr.io/topo-project/topo:0.1.0 .
#
# There is no ENTRYPOINT: the chart names the binary each container runs
# (command: [/usr/bin/topo-webhook] or [/usr/bin/topo-sync]).
# test/e2e/dockerfile_check.py checks, in the suite, that every library the
# built binaries link is installed by the runtime stage.

# ---- build: the -dev packages, a Release build installed under /out
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        build-essential cmake pkg-config \
        libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev \
        libmicrohttpd-dev libsqlite3-dev libcmocka-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
 && cmake --build /build -j"$(nproc)" --target topoassign topo-webhook topo-sync \
 && DESTDIR=/out cmake --install /build

# ---- runtime: the shared libraries only (libcurl4 brings libnghttp2 and the
# rest of its chain, libmicrohttpd12 GnuTLS); ca-certificates for the
# system trust store NetBox and UFM are checked against without a caFile.
FROM debian:12-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        libcurl4 libjansson4 libyaml-0-2 libssl3 libmicrohttpd12 libsqlite3-0 \
        ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 topo \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin topo
# What `cmake --install` put there: the three binaries and the kubectl-topo link.
COPY --from=build /out/usr/bin/ /usr/bin/
# Numeric, so that the kubelet can check runAsNonRoot without /etc/passwd.
USER 65532:65532
CMD ["/usr/bin/topoassign", "--help"]
