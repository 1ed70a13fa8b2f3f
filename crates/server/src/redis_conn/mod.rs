//! One Redis connection type for a single server, for Redis Cluster and for a primary found
//! through Redis Sentinel, so the task store, the task runtime, the limiter and the push queue
//! run the same code against all three. Every multi-key operation of this server keeps its keys
//! under one hash tag, so each stays in one cluster slot. The type is made in one place
//! ([`open`]), so a later kind of connection (one per serving thread) is added here alone.

mod primary;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Script, Value};
use thread_local::ThreadLocal;

use crate::config::StoreSettings;
use primary::PrimaryLink;
pub use primary::SentinelTarget;

/// Where the server's Redis is, how long a command may take, and how many replicas must hold a
/// write before its call is answered.
#[derive(Clone)]
pub struct Target {
    /// A Redis URL, or comma-separated cluster seed nodes; with `sentinel`, only the scheme,
    /// credentials and database of the primary's connection.
    pub url: Option<String>,
    /// A Redis Cluster even with one seed node.
    pub cluster: bool,
    /// The sentinels that name the primary, instead of `url`'s host.
    pub sentinel: Option<SentinelTarget>,
    /// Bounds connecting and each command.
    pub timeout: Duration,
    /// Replicas a write must reach before [`RedisConnection::acknowledge`] succeeds.
    pub ack: Option<Ack>,
}

/// The durability a write must reach: `replicas` replicas within `timeout` (Redis `WAIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// How many replicas.
    pub replicas: u32,
    /// How long to wait for them.
    pub timeout: Duration,
}

impl Target {
    /// The store's Redis (`[store]`): its URL or sentinels, its timeout and `replicas_to_ack`.
    pub fn of_store(store: &StoreSettings) -> Target {
        let sentinels = store.sentinel_addresses();
        Target {
            url: store.redis_url.clone(),
            cluster: store.redis_cluster,
            sentinel: (!sentinels.is_empty()).then(|| SentinelTarget {
                sentinels,
                master: store.redis_sentinel_master.clone().unwrap_or_default(),
                password: store.redis_sentinel_password.clone(),
            }),
            timeout: Duration::from_millis(store.redis_timeout_ms),
            ack: (store.replicas_to_ack > 0).then(|| Ack {
                replicas: store.replicas_to_ack,
                timeout: Duration::from_millis(store.replicas_ack_timeout_ms),
            }),
        }
    }

    /// One Redis (or cluster seed nodes) at `url`, no replicas awaited.
    pub fn url(url: &str, cluster: bool, timeout: Duration) -> Target {
        Target {
            url: Some(url.to_string()),
            cluster,
            sentinel: None,
            timeout,
            ack: None,
        }
    }
}

/// A connection to the deployment's Redis: reconnecting to one server, following `MOVED` in a
/// cluster, or following the primary the sentinels name. Cheap to clone; clone it per operation.
#[derive(Clone)]
pub struct RedisConnection {
    link: Link,
    ack: Option<Ack>,
}

#[derive(Clone)]
enum Link {
    /// One server (or a primary behind a proxy): a reconnecting connection per thread.
    Single(Arc<ThreadLinks>),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
    /// The primary of a Sentinel deployment, or one primary whose writes wait for replicas:
    /// a connection that knows when it was replaced.
    Primary(PrimaryLink),
}

/// Connects to `url`. Several URLs separated by commas, or `cluster = true`, mean a Redis Cluster
/// seeded by those nodes. `timeout` bounds connecting and each command, so a stalled Redis
/// becomes an error quickly instead of a hung request; a missing Redis fails the start.
pub async fn connect(url: &str, cluster: bool, timeout: Duration) -> RedisResult<RedisConnection> {
    open(&Target::url(url, cluster, timeout)).await
}

/// Connects to `target` (see [`connect`]); with sentinels, to the primary they name now.
pub async fn open(target: &Target) -> RedisResult<RedisConnection> {
    let link = match &target.sentinel {
        Some(sentinel) => Link::Primary(
            PrimaryLink::through_sentinels(sentinel.clone(), target.url.as_deref(), target.timeout)
                .await?,
        ),
        None => link_to_url(target.url.as_deref().unwrap_or_default(), target).await?,
    };
    Ok(RedisConnection {
        link,
        ack: target.ack,
    })
}

async fn link_to_url(url: &str, target: &Target) -> RedisResult<Link> {
    let nodes: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    if target.cluster || nodes.len() > 1 {
        let client = ClusterClientBuilder::new(nodes)
            .connection_timeout(target.timeout)
            .response_timeout(target.timeout)
            .retries(2)
            .build()?;
        return Ok(Link::Cluster(client.get_async_connection().await?));
    }
    if target.ack.is_some() {
        // `WAIT` must go over the write's own connection, which a reconnecting manager may
        // have replaced unseen.
        return Ok(Link::Primary(
            PrimaryLink::fixed(url, target.timeout).await?,
        ));
    }
    let client = redis::Client::open(url)?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(target.timeout))
        .set_response_timeout(Some(target.timeout))
        .set_number_of_retries(2);
    Ok(Link::Single(Arc::new(
        ThreadLinks::open(client, config).await?,
    )))
}

/// One reconnecting connection per thread that talks to Redis, each made on that thread's
/// first command, so that its driver runs on that thread's runtime: a serving thread's
/// commands and their answers stay on its core, where one connection shared by every thread
/// would hand each command to the thread running its driver and each answer back (two
/// cross-thread wake-ups a round trip). Each connection keeps the order of the commands sent
/// through it; a call's commands follow one another, so they keep theirs on any thread.
struct ThreadLinks {
    client: redis::Client,
    config: ConnectionManagerConfig,
    links: ThreadLocal<ConnectionManager>,
    /// The database every connection selects (from the URL).
    db: i64,
}

impl ThreadLinks {
    /// The links, with the starting thread's connection made now: a Redis that cannot be
    /// reached fails the start, not the first call.
    async fn open(client: redis::Client, config: ConnectionManagerConfig) -> RedisResult<Self> {
        let first = client
            .get_connection_manager_with_config(config.clone())
            .await?;
        let links = ThreadLocal::new();
        let db = first.get_db();
        links.get_or(|| first);
        Ok(ThreadLinks {
            client,
            config,
            links,
            db,
        })
    }

    /// This thread's connection, made if it has none yet.
    async fn current(&self) -> RedisResult<ConnectionManager> {
        if let Some(link) = self.links.get() {
            return Ok(link.clone());
        }
        let made = self
            .client
            .get_connection_manager_with_config(self.config.clone())
            .await?;
        Ok(self.links.get_or(|| made).clone())
    }
}

impl RedisConnection {
    /// Waits until the configured number of replicas hold every write this connection sent
    /// before (`WAIT`, on the node of `key`'s slot in a cluster); an error when fewer did within
    /// the timeout, or when the connection changed to another primary since this clone was
    /// made, since the write may then be on a primary that is gone. A no-op without
    /// `replicas_to_ack`. The connection is shared by concurrent calls, so the wait covers
    /// theirs too, and holds the connection until the replicas answer.
    pub async fn acknowledge(&mut self, key: &str) -> RedisResult<()> {
        let Some(ack) = self.ack else {
            return Ok(());
        };
        let mut wait = redis::cmd("WAIT");
        wait.arg(ack.replicas).arg(ack.timeout.as_millis() as u64);
        let acked: i64 = if let Link::Cluster(c) = &mut self.link {
            let route = Route::with_key(key, SlotAddr::Master);
            let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
            redis::from_redis_value(c.route_command(wait, routing).await?)
                .map_err(|e| RedisError::from((ErrorKind::Parse, "WAIT reply", e.to_string())))?
        } else {
            wait.query_async(self).await?
        };
        if let Link::Primary(link) = &mut self.link
            && link.moved()
        {
            return Err(not_acknowledged(
                "the Redis primary changed during the write",
            ));
        }
        if acked < i64::from(ack.replicas) {
            return Err(not_acknowledged(&format!(
                "{acked} of {} replicas acknowledged the write within {} ms",
                ack.replicas,
                ack.timeout.as_millis()
            )));
        }
        Ok(())
    }

    /// As [`Self::acknowledge`], for a write another connection may have made: `key` (which
    /// must exist with a TTL, as a message record does) is first given its own expiry again, a
    /// write that changes nothing, so the wait covers every write made to the primary before
    /// it. A resend that finds its message already recorded is answered only once the first
    /// attempt's write is on the replicas too.
    pub async fn acknowledge_existing(&mut self, key: &str) -> RedisResult<()> {
        if self.ack.is_none() {
            return Ok(());
        }
        static TOUCH: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| {
            Script::new(
                "local ttl = redis.call('PTTL', KEYS[1])\n\
                 if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end\n\
                 return ttl",
            )
        });
        let _: i64 = TOUCH.key(key).invoke_async(self).await?;
        self.acknowledge(key).await
    }

    /// The same Redis, its writes awaited by no replica (the limiter's charges, which no
    /// answer promises to keep); it follows the primary together with this connection.
    pub fn without_ack(&self) -> RedisConnection {
        RedisConnection {
            link: self.link.clone(),
            ack: None,
        }
    }

    /// Ticks each time this connection gives up its primary (lost, or moved by the sentinels),
    /// for a subscription of its own that must follow it; `None` where there is no primary to
    /// follow (one server, a cluster).
    pub fn replacements(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        match &self.link {
            Link::Primary(link) => Some(link.replacements()),
            _ => None,
        }
    }

    /// A client for a connection of its own to the primary (the runtime's pub/sub listener):
    /// the one this connection's commands go to now; for a cluster, its first seed node (every
    /// node hears each `PUBLISH`).
    pub async fn subscriber_client(&self, url: Option<&str>) -> RedisResult<redis::Client> {
        match &self.link {
            Link::Primary(link) => link.primary_client().await,
            _ => {
                let url = url.unwrap_or_default();
                redis::Client::open(url.split(',').map(str::trim).next().unwrap_or_default())
            }
        }
    }
}

/// The error of a write that did not reach its replicas: the caller answers it as a failure
/// the client may resend.
fn not_acknowledged(detail: &str) -> RedisError {
    RedisError::from((
        ErrorKind::Io,
        "write not acknowledged by its replicas",
        detail.to_string(),
    ))
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match &mut self.link {
            Link::Single(links) => Box::pin(async move {
                let mut link = links.current().await?;
                link.req_packed_command(cmd).await
            }),
            Link::Cluster(c) => c.req_packed_command(cmd),
            Link::Primary(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match &mut self.link {
            Link::Single(links) => Box::pin(async move {
                let mut link = links.current().await?;
                link.req_packed_commands(pipeline, offset, count).await
            }),
            Link::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            Link::Primary(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.link {
            Link::Single(links) => links.db,
            Link::Cluster(c) => c.get_db(),
            Link::Primary(c) => c.get_db(),
        }
    }
}
