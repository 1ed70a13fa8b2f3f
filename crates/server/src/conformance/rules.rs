//! The rules a well-behaved client follows, as the kit checks and reports them.

/// A rule a well-behaved client follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The rule's id.
    pub id: &'static str,
    /// Why it matters.
    pub why: &'static str,
}

/// `Content-Type` is not `application/json`.
pub const CONTENT_TYPE: Rule = Rule {
    id: "content-type",
    why: "JSON-RPC calls must be sent with Content-Type: application/json; servers refuse anything else with 415.",
};
/// The body is not one JSON-RPC 2.0 request.
pub const MALFORMED_ENVELOPE: Rule = Rule {
    id: "malformed-envelope",
    why: "A JSON-RPC 2.0 request needs \"jsonrpc\": \"2.0\", a string or number id and a method; without them the server cannot match its reply to the request.",
};
/// One `messageId` for two different messages.
pub const MESSAGE_ID_REUSED: Rule = Rule {
    id: "message-id-reused",
    why: "A messageId names one message: reusing it for a different message makes retries ambiguous (this server answers it as a new message, others refuse it or answer the first message's task). Use a fresh id per message and the same id only to retry the same message.",
};
/// A call reached the limiter before the `retryAfter` it was given had passed.
pub const RETRY_TOO_SOON: Rule = Rule {
    id: "retry-too-soon",
    why: "The server said how long to wait (error.data.retryAfter and Retry-After); retrying sooner is refused again and wastes the client's budget.",
};
/// A token refused with a real 401 was sent again.
pub const REFUSED_TOKEN_REUSED: Rule = Rule {
    id: "refused-token-reused",
    why: "A token refused with 401 stays refused: obtain a new token (see WWW-Authenticate and the protected-resource metadata) before calling again.",
};
/// A method the card says is not supported, refused as such.
pub const UNSUPPORTED_METHOD: Rule = Rule {
    id: "unsupported-method",
    why: "The agent card says this server does not offer this method (capabilities.streaming or pushNotifications is false); check the card before calling it.",
};
/// The card fetched again within its `max-age`.
pub const CARD_REFETCH: Rule = Rule {
    id: "card-refetched-early",
    why: "The agent card is sent with Cache-Control: public, max-age=3600; a client should cache it for that long instead of fetching it again.",
};
/// A terminal task polled again too soon.
pub const POLLING_TERMINAL_TASK: Rule = Rule {
    id: "polling-terminal-task",
    why: "The task is already in a terminal state (completed, failed, canceled or rejected) and will never change; stop polling it.",
};

/// Every rule, for the JUnit report and the docs.
pub const RULES: [Rule; 8] = [
    CONTENT_TYPE,
    MALFORMED_ENVELOPE,
    MESSAGE_ID_REUSED,
    RETRY_TOO_SOON,
    REFUSED_TOKEN_REUSED,
    UNSUPPORTED_METHOD,
    CARD_REFETCH,
    POLLING_TERMINAL_TASK,
];
