//! A connection to a primary that knows when it was replaced: the primary of a Redis Sentinel
//! deployment, followed across failovers, or one fixed primary whose writes wait for replicas.
//! The sentinels are asked for the primary (`SENTINEL get-master-addr-by-name`), the address
//! they give (or the fixed one) is checked to be a primary (`ROLE`), and one multiplexed
//! connection to it is shared by every clone. A command that fails because the connection was
//! lost, timed out or met a replica (`READONLY`: the old primary came back demoted) marks that
//! connection stale, and the next command connects again, asking the sentinels first. The
//! failed command itself is not sent again: it may have been applied (a save script whose reply
//! was lost), and the client's resend of the same message is the safe retry. Each clone
//! remembers the connection its commands went over, so `WAIT` is never sent on a connection
//! other than the write's (a fresh connection's `WAIT` covers nothing and would pass at once).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ConnectionAddr, ErrorKind, IntoConnectionInfo, Pipeline,
    RedisError, RedisFuture, RedisResult, Value,
};

/// How long after a failed search for the primary other commands fail at once instead of
/// searching again, so a burst of calls during a failover does not queue one search each.
const SEARCH_BACKOFF: Duration = Duration::from_millis(100);

/// The sentinels and the name they monitor the primary under.
#[derive(Clone)]
pub struct SentinelTarget {
    /// `(host, port)` of each sentinel, asked in order.
    pub sentinels: Vec<(String, u16)>,
    /// The monitored primary's name.
    pub master: String,
    /// The sentinels' own password, if any.
    pub password: Option<String>,
}

/// A connection that follows the primary. Clones share the primary's connection; each clone
/// remembers the connection its commands went over, so [`PrimaryLink::moved`] tells a write
/// that `WAIT` would no longer cover.
pub(super) struct PrimaryLink {
    shared: Arc<Shared>,
    pinned: Option<(u64, MultiplexedConnection)>,
    moved: bool,
}

impl Clone for PrimaryLink {
    fn clone(&self) -> Self {
        PrimaryLink {
            shared: Arc::clone(&self.shared),
            pinned: None,
            moved: false,
        }
    }
}

/// How the primary is found: through the sentinels, or at the template's own address.
enum Locate {
    Sentinels(SentinelTarget),
    Fixed,
}

struct Shared {
    locate: Locate,
    /// The data nodes' scheme, credentials and database, as a URL whose host is replaced.
    template: redis::ConnectionInfo,
    timeout: Duration,
    state: Mutex<State>,
    searching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    generation: u64,
    current: Option<MultiplexedConnection>,
    failed_at: Option<Instant>,
}

impl PrimaryLink {
    /// Finds the primary the sentinels name now (failing the start when none names a reachable
    /// one); `url` lends its scheme, credentials and database.
    pub(super) async fn through_sentinels(
        target: SentinelTarget,
        url: Option<&str>,
        timeout: Duration,
    ) -> RedisResult<Self> {
        Self::connect(
            Locate::Sentinels(target),
            url.unwrap_or("redis://127.0.0.1/"),
            timeout,
        )
        .await
    }

    /// Connects to the primary at `url`, and again after a lost connection.
    pub(super) async fn fixed(url: &str, timeout: Duration) -> RedisResult<Self> {
        Self::connect(Locate::Fixed, url, timeout).await
    }

    async fn connect(locate: Locate, url: &str, timeout: Duration) -> RedisResult<Self> {
        let template = url.into_connection_info()?;
        let shared = Arc::new(Shared {
            locate,
            template,
            timeout,
            state: Mutex::new(State::default()),
            searching: tokio::sync::Mutex::new(()),
        });
        shared.current().await?;
        Ok(PrimaryLink {
            shared,
            pinned: None,
            moved: false,
        })
    }

    /// Whether this clone's commands went over more than one connection (the primary changed,
    /// or its connection was replaced) since the last call.
    pub(super) fn moved(&mut self) -> bool {
        std::mem::take(&mut self.moved)
    }

    /// A client for the primary the sentinels name now.
    pub(super) async fn primary_client(&self) -> RedisResult<Client> {
        let (host, port) = self.shared.find_primary().await?.0;
        Client::open(self.shared.info_for(host, port))
    }

    /// The connection this clone's next command goes over.
    async fn connection(&mut self) -> RedisResult<(u64, MultiplexedConnection)> {
        let (generation, connection) = self.shared.current().await?;
        match &self.pinned {
            Some((pinned, c)) if *pinned == generation => return Ok((generation, c.clone())),
            Some(_) => self.moved = true,
            None => {}
        }
        self.pinned = Some((generation, connection.clone()));
        Ok((generation, connection))
    }
}

impl Shared {
    /// The primary's connection and its generation, searching for the primary when there is
    /// none (at most one search at a time).
    async fn current(&self) -> RedisResult<(u64, MultiplexedConnection)> {
        if let Some(found) = self.ready()? {
            return Ok(found);
        }
        let _searching = self.searching.lock().await;
        if let Some(found) = self.ready()? {
            return Ok(found);
        }
        match self.find_primary().await {
            Ok((_, connection)) => {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.generation += 1;
                state.current = Some(connection.clone());
                state.failed_at = None;
                Ok((state.generation, connection))
            }
            Err(error) => {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.failed_at = Some(Instant::now());
                Err(error)
            }
        }
    }

    /// The connection when there is one; an error while a failed search is recent.
    fn ready(&self) -> RedisResult<Option<(u64, MultiplexedConnection)>> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(connection) = &state.current {
            return Ok(Some((state.generation, connection.clone())));
        }
        if state
            .failed_at
            .is_some_and(|at| at.elapsed() < SEARCH_BACKOFF)
        {
            return Err(RedisError::from((
                ErrorKind::Io,
                "no Redis primary",
                format!("no reachable primary for {}", self.name()),
            )));
        }
        Ok(None)
    }

    /// Drops the connection of `generation` after `error`, when the error says the primary is
    /// gone or is no longer the primary.
    fn failed(&self, generation: u64, error: &RedisError) {
        let lost = error.is_io_error()
            || error.is_connection_dropped()
            || error.is_timeout()
            || error.kind() == ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
            || error.to_string().contains("READONLY");
        if !lost {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.generation == generation && state.current.is_some() {
            tracing::warn!(primary = %self.name(), %error, "lost the Redis primary; connecting again");
            state.current = None;
        }
    }

    /// What the logs call the primary: the monitored name, or the fixed address.
    fn name(&self) -> String {
        match &self.locate {
            Locate::Sentinels(target) => target.master.clone(),
            Locate::Fixed => self.template.addr().to_string(),
        }
    }

    /// Asks each sentinel in turn for the primary and connects to the first address that
    /// answers `ROLE` as a primary; without sentinels, to the fixed address.
    async fn find_primary(&self) -> RedisResult<((String, u16), MultiplexedConnection)> {
        let target = match &self.locate {
            Locate::Sentinels(target) => target,
            Locate::Fixed => {
                let (host, port) = match self.template.addr() {
                    ConnectionAddr::Tcp(host, port) => (host.clone(), *port),
                    ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), *port),
                    _ => (String::new(), 0),
                };
                let connection = self.connect_primary(self.template.clone()).await?;
                return Ok(((host, port), connection));
            }
        };
        let mut last = RedisError::from((ErrorKind::EmptySentinelList, "no sentinel answered"));
        for (host, port) in &target.sentinels {
            match self.ask(target, host, *port).await {
                Ok(found) => return Ok(found),
                Err(error) => last = error,
            }
        }
        Err(last)
    }

    async fn ask(
        &self,
        target: &SentinelTarget,
        host: &str,
        port: u16,
    ) -> RedisResult<((String, u16), MultiplexedConnection)> {
        let mut info = ConnectionAddr::Tcp(host.to_string(), port).into_connection_info()?;
        if let Some(password) = &target.password {
            info = info
                .set_redis_settings(redis::RedisConnectionInfo::default().set_password(password));
        }
        let mut sentinel = Client::open(info)?
            .get_multiplexed_async_connection_with_config(&self.config())
            .await?;
        let address: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&target.master)
            .query_async(&mut sentinel)
            .await?;
        let Some((host, port)) = address else {
            return Err(RedisError::from((
                ErrorKind::MasterNameNotFoundBySentinel,
                "the sentinel does not monitor this name",
                target.master.clone(),
            )));
        };
        let primary = self
            .connect_primary(self.info_for(host.clone(), port))
            .await?;
        Ok(((host, port), primary))
    }

    /// A connection to `info`, if that server answers `ROLE` as a primary.
    async fn connect_primary(
        &self,
        info: redis::ConnectionInfo,
    ) -> RedisResult<MultiplexedConnection> {
        let address = info.addr().to_string();
        let mut primary = Client::open(info)?
            .get_multiplexed_async_connection_with_config(&self.config())
            .await?;
        let role: Vec<Value> = redis::cmd("ROLE").query_async(&mut primary).await?;
        match role.first() {
            Some(Value::BulkString(role)) if role.as_slice() == b"master" => Ok(primary),
            _ => Err(RedisError::from((
                ErrorKind::Io,
                "the server is not a primary (yet)",
                address,
            ))),
        }
    }

    /// The template's scheme, credentials and database at `host:port`.
    fn info_for(&self, host: String, port: u16) -> redis::ConnectionInfo {
        let addr = match self.template.addr() {
            ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => ConnectionAddr::TcpTls {
                host,
                port,
                insecure: *insecure,
                tls_params: tls_params.clone(),
            },
            _ => ConnectionAddr::Tcp(host, port),
        };
        self.template.clone().set_addr(addr)
    }

    fn config(&self) -> AsyncConnectionConfig {
        AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
    }
}

impl ConnectionLike for PrimaryLink {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let (generation, mut connection) = self.connection().await?;
            let reply = connection.req_packed_command(cmd).await;
            if let Err(error) = &reply {
                self.shared.failed(generation, error);
            }
            reply
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let (generation, mut connection) = self.connection().await?;
            let reply = connection
                .req_packed_commands(pipeline, offset, count)
                .await;
            if let Err(error) = &reply {
                self.shared.failed(generation, error);
            }
            reply
        })
    }

    fn get_db(&self) -> i64 {
        self.shared.template.redis_settings().db()
    }
}
