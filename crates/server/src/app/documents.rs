//! The documents the server publishes about itself, built once at start: the agent card, the
//! RFC 9728 protected-resource metadata, and the `WWW-Authenticate` challenge that points to it.

use serde_json::{Value, json};

use a2a_types::{AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill};

use crate::config::{AuthMode, Settings};
use crate::conformance;
use crate::paths::{self, RPC_PATH};
use crate::service::A2aService;

/// Builds the agent card from the settings and the registered skills, with `grpc_target` as the
/// gRPC interface's URL. It declares exactly the authentication that is enforced: none when
/// `auth.mode` is `none`.
pub fn agent_card(
    settings: &Settings,
    base_url: &str,
    grpc_target: &str,
    service: &A2aService,
) -> AgentCard {
    let (security_schemes, security) = match settings.auth.mode {
        AuthMode::None => (serde_json::Map::new(), Vec::new()),
        AuthMode::Hs256 | AuthMode::Jwks => bearer_security(base_url),
    };
    let modes = vec!["text/plain".to_string(), "application/json".to_string()];
    AgentCard {
        protocol_version: settings.agent.protocol_version.clone(),
        name: settings.agent.name.clone(),
        description: settings.agent.description.clone(),
        url: format!("{base_url}{RPC_PATH}"),
        preferred_transport: "JSONRPC".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        provider: Some(AgentProvider {
            organization: settings.agent.provider_organization.clone(),
            url: settings.agent.provider_url.clone(),
        }),
        documentation_url: settings.agent.documentation_url.clone(),
        capabilities: AgentCapabilities {
            streaming: settings.agent.streaming,
            push_notifications: settings.agent.push_notifications,
            state_transition_history: true,
            extensions: {
                let mut extensions = vec![skill_agents_extension(base_url, service)];
                if settings.conformance.enabled {
                    extensions.push(conformance::card_extension(&settings.conformance));
                }
                extensions
            },
        },
        default_input_modes: modes.clone(),
        default_output_modes: modes.clone(),
        security_schemes,
        security,
        skills: service
            .skills()
            .iter()
            .map(|skill| {
                let info = skill.info();
                AgentSkill {
                    id: info.id.into(),
                    name: info.name.into(),
                    description: format!(
                        "{} Also served as an agent of its own, where a message without metadata.skillId comes to this skill: {base_url}{}",
                        info.description,
                        paths::skill_agent_base(info.id)
                    ),
                    tags: info.tags.iter().map(|t| t.to_string()).collect(),
                    examples: info.examples.iter().map(|e| e.to_string()).collect(),
                    input_modes: modes.clone(),
                    output_modes: modes.clone(),
                }
            })
            .collect(),
        supports_authenticated_extended_card: true,
        supported_interfaces: supported_interfaces(settings, base_url, grpc_target),
    }
}

/// Where the agent is served, each binding and version once: JSON-RPC (1.0 first, the preferred
/// interface, then the card's 0.3 version), HTTP+JSON and gRPC (1.0).
fn supported_interfaces(
    settings: &Settings,
    base_url: &str,
    grpc_target: &str,
) -> Vec<AgentInterface> {
    vec![
        AgentInterface {
            url: format!("{base_url}{RPC_PATH}"),
            protocol_binding: "JSONRPC".into(),
            protocol_version: a2a_types::v1::PROTOCOL_VERSION.into(),
        },
        AgentInterface {
            url: format!("{base_url}{RPC_PATH}"),
            protocol_binding: "JSONRPC".into(),
            protocol_version: settings.agent.protocol_version.clone(),
        },
        AgentInterface {
            url: format!("{base_url}{}", paths::REST_PATH),
            protocol_binding: REST_BINDING.into(),
            protocol_version: a2a_types::v1::PROTOCOL_VERSION.into(),
        },
        AgentInterface {
            url: grpc_target.to_string(),
            protocol_binding: GRPC_BINDING.into(),
            protocol_version: a2a_types::v1::PROTOCOL_VERSION.into(),
        },
    ]
}

/// The `protocolBinding` of the HTTP+JSON interface, as A2A 1.0 names it.
pub const REST_BINDING: &str = "HTTP+JSON";

/// The `protocolBinding` of the gRPC interface, as A2A 1.0 names it.
pub const GRPC_BINDING: &str = "GRPC";

/// What a gRPC client dials to reach the server at `base_url`: `host:port`, the target a gRPC
/// channel takes (the SDKs hand the card's URL to it as it is): the URL's host with `port`
/// (a gRPC listener of its own) or the URL's port, else the scheme's. Whether to dial with TLS
/// follows the scheme the client reached the card by.
pub fn grpc_target(base_url: &str, port: Option<u16>) -> String {
    let (scheme, rest) = base_url.split_once("://").unwrap_or(("http", base_url));
    let authority = rest.split('/').next().unwrap_or(rest);
    let (host, url_port) = match authority.rsplit_once(':') {
        Some((host, port)) if !authority.ends_with(']') => (host, port.parse::<u16>().ok()),
        _ => (authority, None),
    };
    let default = if scheme == "https" { 443 } else { 80 };
    format!("{host}:{}", port.or(url_port).unwrap_or(default))
}

/// The URI of the main card's extension that lists each skill's own agent.
pub const SKILL_AGENTS_EXTENSION: &str =
    "https://magisterium-a2a.invalid/extensions/skill-agents/v1";

/// Where each skill's own agent is, for programs (A2A has no field for sibling agents): an
/// extension whose `params.agents` maps each skill id to its agent's base URL (ending with a
/// slash, see [`paths::skill_agent_base`]).
fn skill_agents_extension(base_url: &str, service: &A2aService) -> Value {
    let agents: serde_json::Map<String, Value> = service
        .skills()
        .iter()
        .map(|skill| {
            let id = skill.info().id;
            (
                id.to_string(),
                json!(format!("{base_url}{}", paths::skill_agent_base(id))),
            )
        })
        .collect();
    json!({
        "uri": SKILL_AGENTS_EXTENSION,
        "description": "Each skill is also served as an agent of its own, for clients that cannot set message.metadata.skillId: its card at {agent}.well-known/agent-card.json (each {agent} ends with a slash), its JSON-RPC endpoint at {agent} (with or without the slash), where a message without skillId goes to that skill; same tokens, limits and tasks as this agent.",
        "required": false,
        "params": {"agents": agents},
    })
}

/// The card of one skill's own agent: the whole agent's card with that skill alone (as the
/// service describes it, without the pointer to itself), its name and description, and its
/// own endpoints (JSON-RPC at its URL, HTTP+JSON below it; no gRPC, whose service is the whole
/// agent's).
pub fn skill_agent_card(whole: &AgentCard, skill: &skills::SkillInfo, base_url: &str) -> AgentCard {
    let url = format!("{base_url}{}", paths::skill_agent(skill.id));
    let mut card = whole.clone();
    card.name = format!("{} — {}", whole.name, skill.name);
    card.description = skill.description.to_string();
    card.url = url.clone();
    let rest_url = format!("{base_url}{}", paths::skill_rest(skill.id));
    // The gRPC binding serves the whole agent only.
    card.supported_interfaces
        .retain(|interface| interface.protocol_binding != GRPC_BINDING);
    for interface in &mut card.supported_interfaces {
        interface.url = if interface.protocol_binding == REST_BINDING {
            rest_url.clone()
        } else {
            url.clone()
        };
    }
    card.skills.retain(|entry| entry.id == skill.id);
    for entry in &mut card.skills {
        entry.description = skill.description.to_string();
    }
    card.capabilities
        .extensions
        .retain(|extension| extension["uri"] != SKILL_AGENTS_EXTENSION);
    card
}

/// The bearer scheme (a JWT, discovered through the protected-resource metadata) and the
/// requirement that every call satisfies it, in the card's 0.3 form.
fn bearer_security(
    base_url: &str,
) -> (
    serde_json::Map<String, Value>,
    Vec<serde_json::Map<String, Value>>,
) {
    let mut schemes = serde_json::Map::new();
    schemes.insert(
        "bearer".into(),
        json!({
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": format!(
                "An OAuth-issued access token (JWT) of a paid plan, sent as `Authorization: Bearer <token>`. Discovery: {base_url}{}",
                paths::RESOURCE_METADATA
            ),
        }),
    );
    let mut requirement = serde_json::Map::new();
    requirement.insert("bearer".into(), json!([]));
    (schemes, vec![requirement])
}

/// RFC 9728 metadata: which authorization servers issue tokens for this resource.
pub fn protected_resource_metadata(settings: &Settings, base_url: &str) -> Value {
    let mut servers = settings.auth.authorization_servers.clone();
    if servers.is_empty()
        && let Some(issuer) = &settings.auth.issuer
    {
        servers.push(issuer.clone());
    }
    json!({
        "resource": base_url,
        "authorization_servers": servers,
        "bearer_methods_supported": ["header"],
        "resource_name": settings.agent.name,
    })
}

/// The `WWW-Authenticate` challenge for requests without a token.
pub fn challenge(base_url: &str) -> String {
    format!(
        "Bearer realm=\"magisterium-a2a\", resource_metadata=\"{base_url}{}\"",
        paths::RESOURCE_METADATA
    )
}

#[cfg(test)]
mod tests {
    use super::grpc_target;

    #[test]
    fn the_grpc_target_is_the_host_and_port_a_channel_dials() {
        assert_eq!(grpc_target("http://127.0.0.1:8080", None), "127.0.0.1:8080");
        assert_eq!(
            grpc_target("https://a2a.example.com", None),
            "a2a.example.com:443"
        );
        assert_eq!(
            grpc_target("http://a2a.example.com/base", None),
            "a2a.example.com:80"
        );
        assert_eq!(
            grpc_target("http://127.0.0.1:8080", Some(50051)),
            "127.0.0.1:50051"
        );
        assert_eq!(grpc_target("http://[::1]:8080", None), "[::1]:8080");
        assert_eq!(grpc_target("https://[::1]", None), "[::1]:443");
    }
}
