# Multi-stage build. cargo-chef compiles the dependencies from the manifests alone, in a layer
# of their own, so a change to the project's code does not rebuild them.
FROM rust:1.95-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.78
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --recipe-path recipe.json -p magisterium-a2a
COPY . .
RUN cargo build --release -p magisterium-a2a --bin magisterium-a2a

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl python3-pip \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /srv/a2a a2a
WORKDIR /srv/a2a
COPY --from=build /src/target/release/magisterium-a2a /usr/local/bin/magisterium-a2a
COPY config config
RUN mkdir -p data && chown a2a:a2a data
USER a2a
ENV A2A__SERVER__BIND=0.0.0.0:8080 \
    A2A__DATA__DIR=/srv/a2a/data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s --retries=3 CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["magisterium-a2a"]
CMD ["serve"]
