//! A connection to a primary that knows when it was replaced: the primary of a Redis Sentinel
//! deployment, followed across failovers, or one fixed primary whose writes wait for replicas.
//! Every sentinel is asked for the primary (`SENTINEL MASTER`) and the answer of the newest
//! configuration (the highest `config-epoch`) is taken, so a sentinel that missed a failover
//! cannot send the server back to a demoted primary; that address is checked to be a primary
//! (`ROLE`), and one multiplexed connection to it is shared by every clone. A command that fails
//! because the connection was lost, timed out or met a replica (`READONLY`: the old primary came
//! back demoted) marks that connection stale, and so does a sentinel's `+switch-master` for the
//! monitored name, heard on a subscription to each sentinel: the next command connects again,
//! asking the sentinels first. The failed command itself is not sent again: it may have been
//! applied (a save script whose reply was lost), and the client's resend of the same message is
//! the safe retry. Each clone remembers the connection its commands went over, so `WAIT` is
//! never sent on a connection other than the write's (a fresh connection's `WAIT` covers nothing
//! and would pass at once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ConnectionAddr, ErrorKind, IntoConnectionInfo, Pipeline,
    RedisError, RedisFuture, RedisResult, Value,
};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// How long after a failed search for the primary other commands fail at once instead of
/// searching again, so a burst of calls during a failover does not queue one search each.
const SEARCH_BACKOFF: Duration = Duration::from_millis(100);
/// How long a lost subscription to a sentinel's failover messages waits before subscribing again.
const SWITCH_RESUBSCRIBE: Duration = Duration::from_secs(1);

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
    /// Counts the primary's connections given up, so that a subscriber elsewhere (the task
    /// signal listener) moves with the commands.
    replaced: watch::Sender<u64>,
    /// The subscriptions to the sentinels' failover messages, stopped with the link.
    switch_watchers: Mutex<Vec<AbortHandle>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        for watcher in self
            .switch_watchers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            watcher.abort();
        }
    }
}

#[derive(Default)]
struct State {
    generation: u64,
    current: Option<MultiplexedConnection>,
    /// The address of `current`.
    address: Option<(String, u16)>,
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
            replaced: watch::Sender::new(0),
            switch_watchers: Mutex::new(Vec::new()),
        });
        shared.current().await?;
        if let Locate::Sentinels(target) = &shared.locate {
            let watchers = target
                .sentinels
                .iter()
                .map(|(host, port)| {
                    tokio::spawn(follow_switches(
                        Arc::downgrade(&shared),
                        target.clone(),
                        host.clone(),
                        *port,
                    ))
                    .abort_handle()
                })
                .collect();
            *shared
                .switch_watchers
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = watchers;
        }
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

    /// A client for the primary the commands go to now (found again if there is none).
    pub(super) async fn primary_client(&self) -> RedisResult<Client> {
        self.shared.current().await?;
        let address = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .address
            .clone();
        let (host, port) = match address {
            Some(address) => address,
            None => self.shared.find_primary().await?.0,
        };
        Client::open(self.shared.info_for(host, port))
    }

    /// Ticks each time the primary's connection is given up (lost, or moved by the
    /// sentinels), for a subscriber that must follow the primary.
    pub(super) fn replacements(&self) -> watch::Receiver<u64> {
        self.shared.replaced.subscribe()
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
            Ok((address, connection)) => {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.generation += 1;
                state.current = Some(connection.clone());
                state.address = Some(address);
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
            state.address = None;
            drop(state);
            self.replaced.send_modify(|count| *count += 1);
        }
    }

    /// Gives up the connection when a sentinel announced another primary (`+switch-master`):
    /// the old one may still answer as a primary (cut off from the sentinels, or not demoted
    /// yet), and writes it takes would be lost when it rejoins as a replica.
    fn switched(&self, to: (String, u16)) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.current.is_none() || state.address.as_ref() == Some(&to) {
            return;
        }
        tracing::warn!(primary = %self.name(), to = %format!("{}:{}", to.0, to.1), "the sentinels moved the Redis primary; connecting again");
        state.current = None;
        state.address = None;
        drop(state);
        self.replaced.send_modify(|count| *count += 1);
    }

    /// What the logs call the primary: the monitored name, or the fixed address.
    fn name(&self) -> String {
        match &self.locate {
            Locate::Sentinels(target) => target.master.clone(),
            Locate::Fixed => self.template.addr().to_string(),
        }
    }

    /// Asks every sentinel for the primary and connects to the address of the newest
    /// configuration among their answers, if it answers `ROLE` as a primary; without
    /// sentinels, to the fixed address. A sentinel that missed a failover still names the old
    /// primary, which may still answer as one; the configuration epoch tells them apart.
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
        let answers = futures::future::join_all(
            target
                .sentinels
                .iter()
                .map(|(host, port)| self.ask(target, host, *port)),
        )
        .await;
        let mut newest: Option<Named> = None;
        let mut last = RedisError::from((ErrorKind::EmptySentinelList, "no sentinel answered"));
        for answer in answers {
            match answer {
                Ok(named) if newest.as_ref().is_none_or(|n| named.epoch > n.epoch) => {
                    newest = Some(named);
                }
                Ok(_) => {}
                Err(error) => last = error,
            }
        }
        let Some(Named { address, .. }) = newest else {
            return Err(last);
        };
        let primary = self
            .connect_primary(self.info_for(address.0.clone(), address.1))
            .await?;
        Ok((address, primary))
    }

    /// What one sentinel says of the primary: its address (`get-master-addr-by-name`, which
    /// names the promoted replica as soon as a failover has promoted it) and the configuration
    /// epoch (`SENTINEL MASTER`), in one round trip.
    async fn ask(&self, target: &SentinelTarget, host: &str, port: u16) -> RedisResult<Named> {
        let mut sentinel = Client::open(sentinel_info(target, host, port)?)?
            .get_multiplexed_async_connection_with_config(&self.config())
            .await?;
        let (address, facts): (Option<(String, u16)>, HashMap<String, String>) = redis::pipe()
            .cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&target.master)
            .cmd("SENTINEL")
            .arg("MASTER")
            .arg(&target.master)
            .query_async(&mut sentinel)
            .await?;
        let Some(address) = address else {
            return Err(RedisError::from((
                ErrorKind::MasterNameNotFoundBySentinel,
                "the sentinel does not monitor this name",
                target.master.clone(),
            )));
        };
        let epoch = facts
            .get("config-epoch")
            .and_then(|epoch| epoch.parse().ok())
            .unwrap_or(0);
        Ok(Named { address, epoch })
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

/// A sentinel's answer: the primary's address in its configuration of `epoch`.
struct Named {
    address: (String, u16),
    epoch: u64,
}

/// How to reach one sentinel, with the sentinels' own password.
fn sentinel_info(
    target: &SentinelTarget,
    host: &str,
    port: u16,
) -> RedisResult<redis::ConnectionInfo> {
    let info = ConnectionAddr::Tcp(host.to_string(), port).into_connection_info()?;
    Ok(match &target.password {
        Some(password) => {
            info.set_redis_settings(redis::RedisConnectionInfo::default().set_password(password))
        }
        None => info,
    })
}

/// Listens to one sentinel's `+switch-master` messages (`<name> <old ip> <old port> <new ip>
/// <new port>`) for as long as the link lives, subscribing again after a lost connection.
async fn follow_switches(shared: Weak<Shared>, target: SentinelTarget, host: String, port: u16) {
    loop {
        let subscribed = async {
            let client = Client::open(sentinel_info(&target, &host, port)?)?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe("+switch-master").await?;
            RedisResult::Ok(pubsub)
        }
        .await;
        if let Ok(mut pubsub) = subscribed {
            let mut messages = pubsub.on_message();
            while let Some(message) = messages.next().await {
                let Ok(payload) = message.get_payload::<String>() else {
                    continue;
                };
                let fields: Vec<&str> = payload.split(' ').collect();
                let [name, _, _, new_host, new_port] = fields[..] else {
                    continue;
                };
                let Ok(new_port) = new_port.parse() else {
                    continue;
                };
                if name != target.master {
                    continue;
                }
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                shared.switched((new_host.to_string(), new_port));
            }
        }
        if shared.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(SWITCH_RESUBSCRIBE).await;
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
