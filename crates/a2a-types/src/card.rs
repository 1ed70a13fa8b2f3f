//! The agent card (A2A 0.3 `AgentCard`), the public description clients discover first.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The organisation that runs the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentProvider {
    /// Organisation name.
    pub organization: String,
    /// Organisation URL.
    pub url: String,
}

/// What the agent supports beyond plain request/response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Server-sent events: never, every skill is synchronous.
    pub streaming: bool,
    /// Webhooks: never, clients poll `tasks/get`.
    pub push_notifications: bool,
    /// Tasks keep their message history.
    pub state_transition_history: bool,
    /// Protocol extensions the agent offers (e.g. the client conformance kit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<serde_json::Value>,
}

/// One skill as advertised in the card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// The `metadata.skillId` value that selects it.
    pub id: String,
    /// Human name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Search tags.
    pub tags: Vec<String>,
    /// Example requests.
    pub examples: Vec<String>,
    /// Accepted MIME types.
    pub input_modes: Vec<String>,
    /// Produced MIME types.
    pub output_modes: Vec<String>,
}

/// The agent card served at `/.well-known/agent.json` and `/.well-known/agent-card.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// A2A protocol version the card speaks, e.g. `0.3.0`.
    pub protocol_version: String,
    /// Agent name.
    pub name: String,
    /// Agent description.
    pub description: String,
    /// Absolute URL of the JSON-RPC endpoint.
    pub url: String,
    /// Always `JSONRPC`.
    pub preferred_transport: String,
    /// Server version.
    pub version: String,
    /// Who runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// Where the documentation lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Capabilities.
    pub capabilities: AgentCapabilities,
    /// Default accepted MIME types.
    pub default_input_modes: Vec<String>,
    /// Default produced MIME types.
    pub default_output_modes: Vec<String>,
    /// Named security schemes (OpenAPI style); absent when nothing is enforced.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub security_schemes: Map<String, Value>,
    /// Which schemes a request must satisfy; absent when nothing is enforced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<Map<String, Value>>,
    /// The skills.
    pub skills: Vec<AgentSkill>,
    /// Whether `agent/getAuthenticatedExtendedCard` answers a card with more for an
    /// authenticated caller (this server: yes, the caller's plan).
    pub supports_authenticated_extended_card: bool,
    /// The A2A 1.0 list of endpoints and the protocol version each speaks; 1.0 clients read
    /// this instead of `url`/`preferredTransport`/`protocolVersion`, which 0.3 clients read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_interfaces: Vec<AgentInterface>,
}

/// One entry of `supportedInterfaces` (A2A 1.0): where to call and in which binding and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Absolute URL of the endpoint.
    pub url: String,
    /// `JSONRPC`.
    pub protocol_binding: String,
    /// The A2A version spoken there, e.g. `1.0`.
    pub protocol_version: String,
}
