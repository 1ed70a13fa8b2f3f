//! One Redis connection type for a single server and for Redis Cluster, so the task store and
//! the limiter run the same code against both. Every multi-key operation of this server keeps
//! its keys under one hash tag, so each stays in one cluster slot.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// A reconnecting connection to one Redis, or a cluster connection that follows `MOVED`.
#[derive(Clone)]
pub enum RedisConnection {
    /// One server (or a primary behind a proxy).
    Single(ConnectionManager),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

/// Connects to `url`. Several URLs separated by commas, or `cluster = true`, mean a Redis Cluster
/// seeded by those nodes. `timeout` bounds connecting and each command, so a stalled Redis
/// becomes an error quickly instead of a hung request; a missing Redis fails the start.
pub async fn connect(url: &str, cluster: bool, timeout: Duration) -> RedisResult<RedisConnection> {
    let nodes: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    if cluster || nodes.len() > 1 {
        let client = ClusterClientBuilder::new(nodes)
            .connection_timeout(timeout)
            .response_timeout(timeout)
            .retries(2)
            .build()?;
        return Ok(RedisConnection::Cluster(
            client.get_async_connection().await?,
        ));
    }
    let client = redis::Client::open(url)?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(2);
    Ok(RedisConnection::Single(
        client.get_connection_manager_with_config(config).await?,
    ))
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConnection::Single(c) => c.req_packed_command(cmd),
            RedisConnection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConnection::Single(c) => c.req_packed_commands(pipeline, offset, count),
            RedisConnection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConnection::Single(c) => c.get_db(),
            RedisConnection::Cluster(c) => c.get_db(),
        }
    }
}
